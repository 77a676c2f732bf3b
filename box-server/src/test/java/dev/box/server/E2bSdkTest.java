package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

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
    runSuite();
  }

  @Test
  void onDocker_theSdkCreatesListsAndKillsSandboxes_andMovesFilesBinaryExact() {
    runSuite(
        "backend",
        "docker",
        "image",
        System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm"),
        "docker_host",
        System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock"));
  }

  @Test
  void onBubblewrap_aConnectClientInTheBinaryCodec_isServed() {
    assertThat(run("connect-binary.mjs"))
        .contains("ok Start streams in binary", "ok ListDir in binary", "ok Stat in binary")
        .contains("ok WatchDir starts in binary");
  }

  private static void runSuite(String... settings) {
    assertThat(run("sdk-suite.mjs", settings))
        .contains("ok create", "ok list by metadata", "ok binary round trip (multipart)")
        .contains("ok connect to a killed sandbox (SandboxNotFoundError")
        .contains(
            "ok output streamed before the command ended", "ok timeoutMs expiry (TimeoutError")
        .contains("ok commands.connect after disconnect")
        .contains("ok recursive watchDir sees a nested file", "ok stop() ends the watch process")
        .contains("ok wrong API key (list) (AuthenticationError");
  }

  /**
   * Runs {@code script} against a server started with {@code settings} and returns what it printed,
   * once it ended well and left no session behind.
   */
  private static String run(String script, String... settings) {
    E2bSdk sdk = E2bSdk.install();
    try (TestServer box = TestServer.start(settings)) {
      E2bSdk.Result result = sdk.script(script, box.server.port(), box.token());
      System.out.println(result.output());
      assertThat(result.exit()).as(result.output()).isZero();
      assertThat(result.output()).endsWith("done\n");
      assertThat(box.get("/v1/sessions").body()).isEmpty();
      return result.output();
    }
  }
}
