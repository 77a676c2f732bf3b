package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxDataDir;
import dev.box.testclient.Answer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Pre-started bubblewrap sandboxes through the server: a LangBot-shaped session (network off, a
 * {@code host_path} workspace under the data dir, persistent, the default limits) runs in one with
 * its workspace bound; health says how many wait; shutdown leaves no pooled sandbox running and no
 * slot mounted; and {@code pool_size 0} starts every sandbox as before.
 */
class PreStartedSandboxTest {

  private static String pool(TestServer box) {
    return box.get("/v1/health").body().path("enforced").path("pool").asText();
  }

  @Test
  void aLangBotShapedSession_runsInAPreStartedSandbox_andShutdownLeavesNothingOfThePool()
      throws IOException {
    TestServer box = TestServer.start();
    Path stateDir = BoxDataDir.stateDir(box.dataDir);
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> pool(box).startsWith("2 of 2 "));
      Path workspace = Files.createDirectories(box.dataDir.resolve("tenants/t1"));
      // An operator's directory the sandbox user may write, as LangBot's tenants are.
      Files.setAttribute(workspace, "unix:uid", IsolationConfig.DEFAULT_SANDBOX_UID);
      String shape =
          "\"host_path\":\""
              + workspace.toRealPath()
              + "\",\"persistent\":true,\"network\":\"off\"";

      Answer a = box.exec("langbot", "echo hi > made; ls /workspace; id -u", shape);

      assertThat(a.stdout()).as(a.body().toString()).isEqualTo("made\n1000\n");
      assertThat(box.get("/v1/sessions/langbot").text("backend_session_id")).contains("_pool-");
      assertThat(Files.readString(workspace.resolve("made"))).isEqualTo("hi\n");
      assertThat(Files.getAttribute(workspace.resolve("made"), "unix:uid"))
          .isEqualTo(IsolationConfig.DEFAULT_SANDBOX_UID);
      await().atMost(Duration.ofSeconds(30)).until(() -> pool(box).startsWith("2 of 2 "));
      assertThat(pooledBwraps(stateDir)).hasSize(3);
    } finally {
      box.close();
    }
    assertThat(pooledBwraps(stateDir)).isEmpty();
    assertThat(mountsUnder(stateDir)).isEmpty();
  }

  @Test
  void poolSizeZero_startsEverySandboxFresh() {
    try (TestServer box = TestServer.start("pool_size", "0")) {
      assertThat(pool(box)).startsWith("none");

      assertThat(box.exec("s", "echo ok").stdout()).isEqualTo("ok\n");
      assertThat(box.get("/v1/sessions/s").text("backend_session_id")).doesNotContain("_pool-");
      assertThat(pooledBwraps(BoxDataDir.stateDir(box.dataDir))).isEmpty();
    }
  }

  /** The bwrap processes of pre-started sandboxes of the server on {@code stateDir}. */
  private static List<ProcessHandle> pooledBwraps(Path stateDir) {
    String tag = "box-" + dev.box.core.Hashes.shortSha256(stateDir.toString()) + "/";
    return ProcessHandle.allProcesses()
        .filter(h -> h.info().command().map(c -> c.endsWith("/bwrap")).orElse(false))
        .filter(
            h ->
                Stream.of(h.info().arguments().orElse(new String[0]))
                    .anyMatch(arg -> arg.startsWith(tag) && arg.contains("_pool-")))
        .toList();
  }

  private static List<String> mountsUnder(Path dir) throws IOException {
    return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
        .map(line -> line.split(" ")[4])
        .filter(point -> point.startsWith(dir.toString()))
        .toList();
  }
}
