package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/**
 * E2B's unchanged JS SDK ({@code e2b@2.51.0}, run by Node) against a real Box server on bubblewrap
 * and on Docker ({@code scripts/engines up}): the sandbox's lifecycle through the control plane at
 * {@code /e2b}, its files and commands through envd at {@code /e2b/envd}, each check in {@code
 * src/test/e2b/sdk-suite.mjs}; and a Connect client in the binary codec ({@code
 * connect-binary.mjs}).
 */
class E2bSdkTest {
  @Test
  void onBubblewrap_theSdkCreatesListsAndKillsSandboxes_andMovesFilesBinaryExact() {
    runSuite(false);
  }

  /** E2B's quickstart (docs/examples/e2b-quickstart.mjs) runs unchanged, streaming its output. */
  @Test
  void e2bsQuickstart_runsUnchanged() {
    E2bSdk sdk = E2bSdk.install();
    try (TestServer box = TestServer.start()) {
      E2bSdk.Result result =
          sdk.example("e2b-quickstart.mjs", box.server.port(), String.valueOf(box.token()));
      assertThat(result.exit()).as(result.output()).isZero();
      assertThat(result.output())
          .contains("stdout: line 1\nstdout: line 2\nstdout: line 3\n")
          .contains("exit code: 0")
          .contains("downloaded: Hello from E2B!")
          .containsPattern("files: .*hello\\.txt");
      assertThat(box.get("/v1/sessions").body()).isEmpty();
    }
  }

  /** On Docker the SDK's key is one the server issued, revoked afterwards. */
  @Test
  void onDocker_theSdkCreatesListsAndKillsSandboxes_andMovesFilesBinaryExact() {
    runSuite(true, TestServer.docker());
  }

  @Test
  void onBubblewrap_aConnectClientInTheBinaryCodec_isServed() {
    assertThat(run("connect-binary.mjs", false))
        .contains("ok Start streams in binary", "ok ListDir in binary", "ok Stat in binary")
        .contains("ok WatchDir starts in binary");
  }

  private static void runSuite(boolean issuedKey, String... settings) {
    assertThat(run("sdk-suite.mjs", issuedKey, settings))
        .contains("ok create", "ok list by metadata", "ok binary round trip (multipart)")
        .contains("ok connect to a killed sandbox (SandboxNotFoundError")
        .contains(
            "ok output streamed before the command ended", "ok timeoutMs expiry (TimeoutError")
        .contains("ok commands.connect after disconnect")
        .contains("ok recursive watchDir sees a nested file", "ok stop() ends the watch process")
        .contains("ok download by a signed URL", "ok upload by a signed URL")
        .contains("ok getMetrics sees 64 MiB held", "ok updateNetwork that changes it")
        .contains("ok Sandbox.create(snapshotId) sees the files written before the snapshot")
        .contains("ok listSnapshots of a sandbox", "ok deleteSnapshot of a deleted snapshot")
        .contains("ok forks see the source files", "ok forks diverge from the source")
        .contains("ok wrong API key (list) (AuthenticationError");
  }

  /**
   * Runs {@code script} against a server started with {@code settings}, with the control token as
   * the API key or, when {@code issuedKey}, a key the server issued (revoked afterwards, and then
   * refused), and returns what it printed, once it ended well and left no session behind.
   */
  private static String run(String script, boolean issuedKey, String... settings) {
    E2bSdk sdk = E2bSdk.install();
    try (TestServer box = TestServer.start(settings)) {
      JsonNode key = issuedKey ? box.post("/v1/e2b/api-keys", "{\"name\":\"sdk\"}").body() : null;
      String apiKey = key != null ? key.path("key").asText() : box.token();
      E2bSdk.Result result = sdk.script(script, box.server.port(), apiKey);
      System.out.println(result.output());
      assertThat(result.exit()).as(result.output()).isZero();
      assertThat(result.output()).endsWith("done\n");
      assertThat(box.get("/v1/sessions").body()).isEmpty();
      if (key != null) {
        assertThat(box.delete("/v1/e2b/api-keys/" + key.path("id").asText()).status())
            .isEqualTo(204);
        assertThat(sdk.script("list.mjs", box.server.port(), apiKey).output())
            .contains("AuthenticationError");
      }
      return result.output();
    }
  }
}
