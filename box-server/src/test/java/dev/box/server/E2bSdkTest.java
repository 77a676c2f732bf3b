package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * E2B's unchanged JS SDK ({@code e2b@2.51.0}, run by Node) against a real Box server on bubblewrap
 * and on Docker ({@code scripts/engines up}): the sandbox's lifecycle through the control plane at
 * {@code /e2b}, its files and commands through envd at {@code /e2b/envd}, each check in {@code
 * src/test/e2b/sdk-suite.mjs}.
 */
class E2bSdkTest {
  @Test
  void onBubblewrap_theSdkCreatesListsAndKillsSandboxes_andMovesFilesBinaryExact() {
    runSuite();
  }

  @Test
  void onDocker_theSdkCreatesListsAndKillsSandboxes_andMovesFilesBinaryExact() {
    runSuite(TestServer.docker());
  }

  private static void runSuite(String... settings) {
    E2bSdk sdk = E2bSdk.install();
    try (TestServer box = TestServer.start(settings)) {
      E2bSdk.Result result = sdk.script("sdk-suite.mjs", box.server.port(), box.token());
      System.out.println(result.output());
      assertThat(result.exit()).as(result.output()).isZero();
      assertThat(result.output())
          .contains("ok create", "ok list by metadata", "ok binary round trip (multipart)")
          .contains("ok connect to a killed sandbox (SandboxNotFoundError")
          .contains(
              "ok output streamed before the command ended", "ok timeoutMs expiry (TimeoutError")
          .contains("ok commands.connect after disconnect")
          .contains("ok wrong API key (list) (AuthenticationError")
          .endsWith("done\n");
      assertThat(box.get("/v1/sessions").body()).isEmpty();
    }
  }
}
