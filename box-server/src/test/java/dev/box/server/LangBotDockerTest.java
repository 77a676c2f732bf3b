package dev.box.server;

import static dev.box.server.RpcClient.data;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * LangBot's control channel driving the Docker backend of a real server, against the real Docker
 * Engine ({@code scripts/engines up}): actions run in containers, and {@code box_init}'s {@code
 * docker} section switches the CPU quota of later containers as LangBot's runtime does.
 */
class LangBotDockerTest {
  private static final String TOKEN = LangBotConformanceTest.TOKEN;
  private static final String INSTANCE = LangBotConformanceTest.INSTANCE;
  private static final String CTX =
      "{\"instance_uuid\": \""
          + INSTANCE
          + "\", \"workspace_uuid\": \"ws-docker\", \"placement_generation\": 1}";
  private static BoxServer server;

  @BeforeAll
  static void start() throws IOException {
    Map<String, String> flags = new HashMap<>();
    flags.put("port", "0");
    flags.put("data_dir", Files.createTempDirectory("box-langbot-docker-").toString());
    flags.put("backend", "docker");
    flags.put("image", System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm"));
    flags.put("docker_host", System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock"));
    server =
        BoxServer.start(
            ServerConfig.resolve(flags, Map.of()),
            Clock.systemUTC(),
            Map.of(
                "LANGBOT_BOX_CONTROL_TOKEN", TOKEN, "LANGBOT_BOX_TRUSTED_INSTANCE_UUID", INSTANCE),
            false);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void actionsRunInContainers_andBoxInitsDockerSectionSwitchesTheCpuQuota() throws Exception {
    try (RpcClient rpc = RpcClient.asLangBot(server.port())) {
      assertThat(data(rpc.call("box_get_backend_info", "{}", null)).path("name").asText())
          .isEqualTo("docker");
      JsonNode exec =
          data(
              rpc.call(
                  "box_exec",
                  "{\"session_id\": \"d1\", \"cmd\": \"id -u; cat /proc/1/comm\"}",
                  CTX));
      assertThat(exec.path("stdout").asText()).isEqualTo("1000\nbox-guard");
      assertThat(nanoCpus(rpc, "d1")).isEqualTo("1000000000");

      data(rpc.call("box_init", "{\"docker\": {\"cpu_limit_enabled\": \"false\"}}", null));
      data(rpc.call("box_create_session", "{\"session_id\": \"d2\"}", CTX));
      assertThat(nanoCpus(rpc, "d2")).isEqualTo("0");
      assertThat(server.sessions().backendStatus().enforced()).containsEntry("cpu", "none");

      JsonNode refused = rpc.call("box_init", "{\"docker\": {\"cpu_limit_enabled\": 7}}", null);
      assertThat(refused.path("message").asText())
          .isEqualTo(
              "BoxValidationError: box.docker.cpu_limit_enabled must be a boolean or a string");

      data(rpc.call("box_init", "{\"docker\": {\"cpu_limit_enabled\": true}}", null));
      assertThat(server.sessions().backendStatus().enforced())
          .containsEntry("cpu", "docker-cgroup");
      data(rpc.call("box_delete_session", "{\"session_id\": \"d1\"}", CTX));
      data(rpc.call("box_delete_session", "{\"session_id\": \"d2\"}", CTX));
    }
  }

  /** The CPU quota Docker holds for the session's container, read with Docker's own CLI. */
  private static String nanoCpus(RpcClient rpc, String session) throws Exception {
    String container =
        data(rpc.call("box_get_session", "{\"session_id\": \"" + session + "\"}", CTX))
            .path("backend_session_id")
            .asText();
    Process inspect =
        new ProcessBuilder(
                List.of("/usr/bin/docker", "inspect", "-f", "{{.HostConfig.NanoCpus}}", container))
            .redirectErrorStream(true)
            .start();
    String out = new String(inspect.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(inspect.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(inspect.exitValue()).as(out).isZero();
    return out.strip();
  }
}
