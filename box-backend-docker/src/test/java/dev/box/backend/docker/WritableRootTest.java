package dev.box.backend.docker;

import static dev.box.backend.docker.ContainerBackendTest.IMAGE;
import static dev.box.backend.docker.ContainerBackendTest.run;
import static dev.box.backend.docker.ContainerBackendTest.socket;
import static dev.box.backend.docker.ContainerBackendTest.spec;
import static dev.box.sandbox.SandboxTests.inSandbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.core.net.EgressPolicy;
import dev.box.sandbox.BackendRuntime;
import dev.box.testclient.OptionalPiece;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A container's writable root ({@code read_only_rootfs: false}) is bounded where the engine's
 * storage applies the {@code size} option, and health says what bounds it, or that nothing does.
 *
 * <p>{@code scripts/engines up} runs a second Docker daemon on a btrfs data root for this test (its
 * socket in {@code DOCKER_BTRFS_SOCKET}), where the bound is applied: then the test requires it.
 * Podman's overlay on ext4 applies no bound, which health must say.
 */
class WritableRootTest {
  @TempDir Path dataDir;

  private ContainerBackend open(String engine, int writableRootMb) {
    return open(engine, Path.of(socket(engine)), writableRootMb);
  }

  private ContainerBackend open(String engine, Path socket, int writableRootMb) {
    return ContainerBackend.open(
        new ContainerSettings(
            engine,
            socket,
            null,
            true,
            Duration.ofMinutes(5),
            null,
            ContainerSettings.DEFAULT_SANDBOX_LEASE,
            writableRootMb,
            true,
            0),
        dataDir,
        "inst",
        EgressPolicy.DEFAULT,
        BackendRuntime.system());
  }

  @Test
  void onDockerOverBtrfs_writesPastTheBoundFail_andWhatIsWrittenStaysWithinIt() throws Exception {
    String btrfs = System.getenv("DOCKER_BTRFS_SOCKET");
    OptionalPiece.BTRFS_DOCKERD.assumePresent(
        btrfs != null, "no Docker daemon on a btrfs data root (scripts/engines up makes one)");
    try (ContainerBackend backend = open("docker", Path.of(btrfs), 64)) {
      assertThat(backend.status().enforced().get("writable_root"))
          .isEqualTo("btrfs quota: writable_root_mb=64 beyond the image (storage driver btrfs)");
      inSandbox(
          backend,
          spec("root-bound", IMAGE, null, false),
          sandbox -> {
            String out =
                run(
                    sandbox,
                    "dd if=/dev/zero of=/var/tmp/big bs=1M count=200 2>&1; echo dd=$?;"
                        + " ls -l /var/tmp/big | awk '{print \"size=\" $5}';"
                        + " rm /var/tmp/big; echo small > /var/tmp/after; cat /var/tmp/after");
            assertThat(out).contains("Disk quota exceeded").doesNotContain("dd=0");
            long written = Long.parseLong(out.replaceAll("(?s).*size=(\\d+).*", "$1"));
            assertThat(written).isBetween(32L << 20, 64L << 20);
            assertThat(out).endsWith("small\n");
          });
    }
  }

  @Test
  void aReadOnlyRoot_getsNoStorageOption_andABoundOfZeroIsReportedAsNone() throws Exception {
    try (ContainerBackend backend = open("docker", 0)) {
      assumeTrue(backend.status().available(), "Docker is not running");
      assertThat(backend.status().enforced().get("writable_root"))
          .isEqualTo("none: writable_root_mb is 0 (the engine's layer on the host disk)");
      inSandbox(
          backend,
          spec("root-unbounded", IMAGE, null, true),
          sandbox -> assertThat(run(sandbox, "touch /x 2>&1")).contains("Read-only file system"));
    }
  }

  @Test
  void podmanOverExt4_saysItsWritableRootIsNotBounded_andStillStartsOne() throws Exception {
    try (ContainerBackend backend = open("podman", 64)) {
      assumeTrue(backend.status().available(), "Podman is not running");
      String enforced = backend.status().enforced().getOrDefault("writable_root", "");
      assumeTrue(!enforced.startsWith("xfs"), "Podman's storage is on XFS here");
      assertThat(enforced)
          .startsWith("none: podman's storage driver ")
          .endsWith(
              "cannot bound a container's layer (Docker on btrfs or zfs, or overlay on XFS"
                  + " with project quotas, can)");
      inSandbox(
          backend,
          spec("root-podman", IMAGE, null, false),
          sandbox ->
              assertThat(run(sandbox, "echo ok > /var/tmp/x && cat /var/tmp/x")).isEqualTo("ok\n"));
    }
  }
}
