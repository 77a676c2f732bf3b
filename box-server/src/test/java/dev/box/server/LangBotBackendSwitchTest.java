package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * LangBot's {@code box.backend} through {@code box_init}, against the real engines and bubblewrap:
 * on a server started without {@code --backend} it re-selects the backend while no session exists,
 * as LangBot's runtime does; on a server started with one it changes nothing.
 */
class LangBotBackendSwitchTest {
  private static final String CTX = LangBotServers.context("ws-switch", 1);

  private static BoxServer start(Map<String, String> settings) throws IOException {
    Map<String, String> flags = new HashMap<>(settings);
    flags.put("image", System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm"));
    return LangBotServers.start(flags, LangBotServers.ENV, false);
  }

  private static String backend(RpcClient rpc) {
    return rpc.callData("box_get_backend_info", "{}", null).path("name").asText();
  }

  private static String pid1(RpcClient rpc, String session) {
    String cmd = "{\"session_id\": \"" + session + "\", \"cmd\": \"cat /proc/1/comm\"}";
    return rpc.callData("box_exec", cmd, CTX).path("stdout").asText();
  }

  @Test
  void boxInitReselectsTheBackendWhileNoSessionExists() throws IOException {
    try (BoxServer server = start(Map.of());
        RpcClient rpc = RpcClient.asLangBot(server.port())) {
      assertThat(backend(rpc)).isEqualTo("docker");

      rpc.callData("box_init", "{\"backend\": \"bwrap\"}", null);
      assertThat(backend(rpc)).isEqualTo("bwrap");
      assertThat(pid1(rpc, "a"))
          .as("a bwrap sandbox: its exec agent is its init")
          .isEqualTo("box-agent");

      rpc.callData("box_init", "{\"backend\": \"podman\"}", null);
      assertThat(backend(rpc)).as("a session exists: the backend stays").isEqualTo("bwrap");
      rpc.callData("box_delete_session", "{\"session_id\": \"a\"}", CTX);
      rpc.callData("box_init", "{\"backend\": \"podman\"}", null);
      assertThat(backend(rpc)).isEqualTo("podman");
      assertThat(pid1(rpc, "b")).as("a container: box-guard is its init").isEqualTo("box-guard");
      rpc.callData("box_delete_session", "{\"session_id\": \"b\"}", CTX);

      rpc.callData("box_init", "{\"backend\": \"firecracker\"}", null);
      JsonNode info = rpc.callData("box_get_backend_info", "{}", null);
      assertThat(info.path("available").asBoolean()).isFalse();
      JsonNode refused = rpc.call("box_exec", "{\"session_id\": \"c\", \"cmd\": \"true\"}", CTX);
      assertThat(refused.path("message").asText())
          .isEqualTo(
              "BoxBackendUnavailableError: LangBot Box backend \"firecracker\" not found"
                  + " (box.backend=firecracker, available: [local, docker, podman, bwrap, nsjail,"
                  + " e2b, boxlite, kubernetes, microvm])");

      rpc.callData("box_init", "{\"backend\": \"local\"}", null);
      assertThat(backend(rpc)).isEqualTo("docker");
      assertThat(pid1(rpc, "d")).isEqualTo("box-guard");
    }
  }

  @Test
  void aBackendTheOperatorNamedIsKept() throws IOException {
    try (BoxServer server = start(Map.of("backend", "bwrap"));
        RpcClient rpc = RpcClient.asLangBot(server.port())) {
      rpc.callData("box_init", "{\"backend\": \"docker\"}", null);

      assertThat(backend(rpc)).isEqualTo("bwrap");
      assertThat(pid1(rpc, "e")).isEqualTo("box-agent");
    }
  }
}
