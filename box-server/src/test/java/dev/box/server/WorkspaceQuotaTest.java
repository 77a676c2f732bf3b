package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code workspace_quota_mb} is enforced by the kernel for private workspaces: a sandbox that
 * writes past it gets ENOSPC, the result says which limit it hit, the host's disk holds no more
 * than the quota, and nothing of the workspace's file system outlives the session.
 */
class WorkspaceQuotaTest {
  private static final String QUOTA = "\"workspace_quota_mb\": 8";

  @TempDir Path dataDir;

  @Test
  void writesPastTheQuota_failWithENOSPC_andTheResultNamesTheLimit() throws IOException {
    try (TestServer box = TestServer.startOn(dataDir, Clock.systemUTC())) {
      var enforced = box.get("/v1/health").body().path("enforced");
      assertThat(enforced.path("workspace_quota").asText())
          .isEqualTo("private workspaces: a file system per session");
      assertThat(enforced.path("writable_root").asText())
          .as("a writable root is tmpfs, bounded by the memory cgroup")
          .startsWith("tmpfs, counted in the memory limit (cgroup");
      assertThat(enforced.path("tmp").asText()).isEqualTo(enforced.path("writable_root").asText());

      Answer full =
          box.exec(
              "quota", "dd if=/dev/zero of=/workspace/big bs=1M count=40 2>&1; echo dd=$?", QUOTA);

      assertThat(full.stdout()).contains("No space left on device").doesNotContain("dd=0");
      assertThat(full.stderr())
          .contains("box: the workspace quota (workspace_quota_mb=8) is used up");
      Path workspace = onlyWorkspace();
      assertThat(Files.size(workspace.resolve("big"))).isLessThanOrEqualTo(8L * 1024 * 1024);
      Answer small =
          box.exec("quota", "rm /workspace/big; echo ok > /workspace/f; cat /workspace/f", QUOTA);
      assertThat(small.stdout()).isEqualTo("ok\n");
      assertThat(small.stderr()).doesNotContain("quota");
      Path workspaces = dataDir.resolve(".box-state/workspaces");
      assertThat(mountsUnder(workspaces)).hasSize(1);

      assertThat(box.delete("/v1/sessions/quota").status()).isEqualTo(200);
      assertThat(mountsUnder(workspaces)).isEmpty();
      assertThat(mountsUnder(dataDir))
          .as("nothing but the directories of the pre-started sandboxes' slots")
          .allMatch(point -> point.endsWith("/slots") || point.endsWith("/staging"));
      assertThat(dataDir.resolve(".box-state/workspace-images")).isEmptyDirectory();
    }
  }

  @Test
  void aQuotaedPersistentWorkspace_keepsItsFilesAndItsBoundAcrossARestart() throws IOException {
    String spec = QUOTA + ", \"persistent\": true";
    try (TestServer first = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(first.exec("kept", "echo kept > /workspace/note", spec).ok()).isTrue();
    }
    try (TestServer second = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(
              second.exec("kept", "cat /workspace/note; df -m /workspace | tail -1", spec).stdout())
          .startsWith("kept\n")
          .matches("(?s).* [78] .*");
      assertThat(second.delete("/v1/sessions/kept").status()).isEqualTo(200);
    }
    assertThat(mountsUnder(dataDir)).isEmpty();
  }

  private Path onlyWorkspace() throws IOException {
    try (var entries = Files.list(dataDir.resolve(".box-state/workspaces"))) {
      List<Path> all = entries.toList();
      assertThat(all).hasSize(1);
      return all.get(0);
    }
  }

  /** The mount points under {@code dir}, from the kernel's table. */
  private static List<String> mountsUnder(Path dir) throws IOException {
    String prefix = dir.toRealPath().toString() + "/";
    return Files.readAllLines(Path.of("/proc/self/mounts")).stream()
        .map(line -> line.split(" ")[1])
        .filter(point -> point.startsWith(prefix))
        .toList();
  }
}
