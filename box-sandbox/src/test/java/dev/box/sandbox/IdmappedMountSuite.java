package dev.box.sandbox;

import static dev.box.sandbox.PooledBackendSuite.awaitIdle;
import static dev.box.sandbox.PooledBackendSuite.pooledSpec;
import static dev.box.sandbox.PooledBackendSuite.privateWorkspace;
import static dev.box.sandbox.PooledBackendSuite.run;
import static dev.box.sandbox.SandboxTests.inSandbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.box.api.BoxValidationException;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.PooledBackendSuite.PooledBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Host folders the sandbox user cannot use as they are, in real sandboxes of every backend that
 * mounts them idmapped: a folder of any owner whose owner can use it as the mount asks is used by
 * the sandbox as its owner, what the sandbox writes lands on disk as the owner's, nothing set-id
 * takes effect through it, a folder its owner cannot use either is refused, and no staged mount
 * outlives its sandbox.
 *
 * <p>A backend's test extends this suite with a static {@code pooledBackends()} as for {@link
 * PooledBackendSuite}. Needs root (to own folders as others); a backend missing here is skipped.
 */
public abstract class IdmappedMountSuite {
  @TempDir protected Path dataDir;
  @TempDir protected Path hostDirs;

  /** Opens {@code backend} with a pool of {@code poolSize}, skipping where it cannot run here. */
  private static SandboxBackend open(PooledBackend backend, Path dataDir, int poolSize) {
    assumeThat(System.getProperty("user.name"))
        .as("owning folders as others needs root")
        .isEqualTo("root");
    SandboxBackend opened = backend.open().open(dataDir, poolSize);
    if (!opened.status().available()) {
      opened.close();
    }
    assumeThat(opened.status().available()).as(opened.status().reason()).isTrue();
    assertThat(opened.status().enforced()).containsEntry(IdmappedMounts.HEALTH_KEY, "true");
    return opened;
  }

  /**
   * A host folder {@code name} owned by {@code uid}:{@code uid} with {@code mode}, by real path.
   */
  protected Path folder(String name, int uid, String mode) throws IOException {
    Path dir = Files.createDirectories(hostDirs.resolve(name)).toRealPath();
    Files.writeString(dir.resolve("given"), "from the host\n");
    Files.setAttribute(dir.resolve("given"), "unix:uid", uid);
    Files.setAttribute(dir, "unix:uid", uid);
    Files.setAttribute(dir, "unix:gid", uid);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(mode));
    return dir;
  }

  /** A spec with a new private workspace and {@code mounts}, not of the pooled shape. */
  protected SandboxSpec spec(String session, SandboxMount... mounts) throws IOException {
    SandboxSpec pooled =
        pooledSpec(
            session,
            new SandboxMount(privateWorkspace(dataDir, session), "/workspace", false, true),
            SandboxShape.pooled().memoryMb() - 1,
            false);
    return new SandboxSpec(
        pooled.sessionId(),
        pooled.sandboxName(),
        pooled.instanceId(),
        pooled.image(),
        pooled.network(),
        pooled.workspace(),
        List.of(mounts),
        pooled.readOnlyRootfs(),
        pooled.cpus(),
        pooled.memoryMb(),
        pooled.pidsLimit(),
        pooled.egress(),
        pooled.persistent());
  }

  /** The staged mounts of {@code backend}'s sandboxes on the host. */
  protected List<Path> stagedMounts(PooledBackend backend) {
    return WorkspaceSlots.mountPointsUnder(
        dataDir.toAbsolutePath().normalize().resolve(backend.name() + "-idmapped"));
  }

  private static int uidOf(Path file) throws IOException {
    return (Integer) Files.getAttribute(file, "unix:uid");
  }

  private static int gidOf(Path file) throws IOException {
    return (Integer) Files.getAttribute(file, "unix:gid");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aRootOwned0700Folder_isReadReadOnly_andStaysReadOnly(PooledBackend pooled) throws Exception {
    Path secret = folder("secret", 0, "rwx------");
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      inSandbox(
          backend,
          spec("ro", new SandboxMount(secret, "/data", true)),
          sandbox -> {
            assertThat(run(sandbox, "cat /data/given; id -u"))
                .isEqualTo("from the host\n1000\nexit=0");
            assertThat(run(sandbox, "touch /data/new 2>/dev/null || echo refused"))
                .isEqualTo("refused\nexit=0");
            assertThat(stagedMounts(pooled)).hasSize(1);
          });
      assertThat(secret.resolve("new")).doesNotExist();
      assertThat(stagedMounts(pooled)).as("detached with its sandbox").isEmpty();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aRootOwned0755Folder_isWrittenReadWrite_andWhatTheSandboxWritesIsRoots(PooledBackend pooled)
      throws Exception {
    Path shared = folder("shared", 0, "rwxr-xr-x");
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      inSandbox(
          backend,
          spec("rw", new SandboxMount(shared, "/data", false)),
          sandbox ->
              assertThat(run(sandbox, "echo made > /data/made; mkdir /data/dir; cat /data/made"))
                  .isEqualTo("made\nexit=0"));
      assertThat(Files.readString(shared.resolve("made"))).isEqualTo("made\n");
      for (Path made : List.of(shared.resolve("made"), shared.resolve("dir"))) {
        assertThat(uidOf(made)).as("owner of " + made).isZero();
        assertThat(gidOf(made)).as("group of " + made).isZero();
      }
      assertThat(stagedMounts(pooled)).isEmpty();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aFolderOfAnotherUid_withMode0700_isUsableReadWrite_andFilesLandAsThatUid(
      PooledBackend pooled) throws Exception {
    Path theirs = folder("theirs", 4321, "rwx------");
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      inSandbox(
          backend,
          spec("other", new SandboxMount(theirs, "/data", false)),
          sandbox ->
              assertThat(run(sandbox, "cat /data/given; echo made > /data/made; stat -c %u /data"))
                  .isEqualTo("from the host\n1000\nexit=0"));
      assertThat(uidOf(theirs.resolve("made"))).isEqualTo(4321);
      assertThat(gidOf(theirs.resolve("made"))).isEqualTo(4321);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aSetuidFile_madeThroughTheMount_runsAsTheSandboxUser_onANosuidMount(PooledBackend pooled)
      throws Exception {
    Path shared = folder("suid", 0, "rwxr-xr-x");
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      inSandbox(
          backend,
          spec("suid", new SandboxMount(shared, "/data", false)),
          sandbox -> {
            assertThat(run(sandbox, "grep ' /data ' /proc/self/mountinfo"))
                .contains("nosuid")
                .contains("nodev");
            assertThat(
                    run(
                        sandbox,
                        "cp \"$(command -v id)\" /data/id && chmod u+s /data/id && /data/id -u"))
                .isEqualTo("1000\nexit=0");
          });
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aFolderItsOwnerCannotUseEither_isStillRefused(PooledBackend pooled) throws Exception {
    Path closed = folder("closed", 0, "---------");
    Path readOnly = folder("readonly", 4321, "r-x------");
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      assertThatThrownBy(() -> backend.start(spec("c1", new SandboxMount(closed, "/data", true))))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("host_path " + closed)
          .hasMessageContaining("mode 0000")
          .hasMessageContaining("is not readable");
      assertThatThrownBy(
              () -> backend.start(spec("c2", new SandboxMount(readOnly, "/data", false))))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("is not writable")
          .hasMessageContaining("or mount it read-only");
      assertThat(stagedMounts(pooled)).isEmpty();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aFolderTheSandboxUserCanUse_keepsItsPlainBind(PooledBackend pooled) throws Exception {
    Path open = folder("open", 0, "rwxrwxrwx");
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      inSandbox(
          backend,
          spec("plain", new SandboxMount(open, "/data", false)),
          sandbox -> {
            assertThat(run(sandbox, "echo made > /data/made")).isEqualTo("exit=0");
            assertThat(stagedMounts(pooled)).isEmpty();
          });
      assertThat(uidOf(open.resolve("made"))).isEqualTo(pooled.sandboxUid());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aPreStartedSandbox_takesARootOwnedWorkspaceIdmapped(PooledBackend pooled) throws Exception {
    Path shared = folder("pooled", 0, "rwxr-xr-x");
    try (SandboxBackend backend = open(pooled, dataDir, 1)) {
      awaitIdle(backend, 1);
      inSandbox(
          backend,
          pooledSpec("p1", shared, false, false),
          sandbox -> {
            assertThat(sandbox.preStarted()).isTrue();
            assertThat(run(sandbox, "cat given; echo made > made"))
                .isEqualTo("from the host\nexit=0");
          });
      assertThat(uidOf(shared.resolve("made"))).isZero();
      assertThat(stagedMounts(pooled)).isEmpty();
    }
  }
}
