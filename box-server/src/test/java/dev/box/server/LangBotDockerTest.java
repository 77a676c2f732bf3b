package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
  private static final String CTX = LangBotServers.context("ws-docker", 1);
  private static BoxServer server;

  @BeforeAll
  static void start() throws IOException {
    server =
        LangBotServers.start(
            Map.of(
                "backend",
                "docker",
                "image",
                System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm"),
                "docker_host",
                System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock")),
            LangBotServers.ENV,
            false);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void actionsRunInContainers_andBoxInitsDockerSectionSwitchesTheCpuQuota() throws Exception {
    try (RpcClient rpc = RpcClient.asLangBot(server.port())) {
      assertThat(rpc.callData("box_get_backend_info", "{}", null).path("name").asText())
          .isEqualTo("docker");
      JsonNode exec =
          rpc.callData(
              "box_exec", "{\"session_id\": \"d1\", \"cmd\": \"id -u; cat /proc/1/comm\"}", CTX);
      assertThat(exec.path("stdout").asText()).isEqualTo("1000\nbox-guard");
      assertThat(nanoCpus(rpc, "d1")).isEqualTo("1000000000");

      rpc.callData("box_init", "{\"docker\": {\"cpu_limit_enabled\": \"false\"}}", null);
      rpc.callData("box_create_session", "{\"session_id\": \"d2\"}", CTX);
      assertThat(nanoCpus(rpc, "d2")).isEqualTo("0");
      assertThat(server.sessions().backendStatus().enforced()).containsEntry("cpu", "none");

      JsonNode refused = rpc.call("box_init", "{\"docker\": {\"cpu_limit_enabled\": 7}}", null);
      assertThat(refused.path("message").asText())
          .isEqualTo(
              "BoxValidationError: box.docker.cpu_limit_enabled must be a boolean or a string");

      rpc.callData("box_init", "{\"docker\": {\"cpu_limit_enabled\": true}}", null);
      assertThat(server.sessions().backendStatus().enforced())
          .containsEntry("cpu", "docker-cgroup");
      rpc.callData("box_delete_session", "{\"session_id\": \"d1\"}", CTX);
      rpc.callData("box_delete_session", "{\"session_id\": \"d2\"}", CTX);
    }
  }

  /** The CPU quota Docker holds for the session's container, read with Docker's own CLI. */
  private static String nanoCpus(RpcClient rpc, String session) throws Exception {
    String container =
        rpc.callData("box_get_session", "{\"session_id\": \"" + session + "\"}", CTX)
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
