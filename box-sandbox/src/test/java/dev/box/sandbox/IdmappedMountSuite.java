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
import dev.box.core.backend.Sandbox;
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
 * the sandbox as its owner, what the sandbox writes lands on disk as the owner's, but never with a
 * set-id bit (box-guard's filter refuses every way to give one), a folder its owner cannot use
 * either is refused, and no staged mount outlives its sandbox.
 *
 * <p>A backend's test extends this suite with a static {@code pooledBackends()} as for {@link
 * PooledBackendSuite}. Needs root (to own folders as others); a backend missing here is skipped.
 */
public abstract class IdmappedMountSuite {
  @TempDir protected Path dataDir;
  @TempDir protected Path hostDirs;

  /** How many staged mounts there were while {@link #runWith}'s sandbox ran. */
  private int stagedWhileRunning = -1;

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
    SandboxMount workspace =
        new SandboxMount(privateWorkspace(dataDir, session), "/workspace", false, true);
    return pooledSpec(session, workspace, SandboxShape.pooled().memoryMb() - 1, false)
        .withMounts(workspace, List.of(mounts));
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

  private static int modeOf(Path file) throws IOException {
    return (Integer) Files.getAttribute(file, "unix:mode");
  }

  /**
   * Runs {@code script} in a sandbox of a new backend with {@code folder} at {@code /data}: its
   * output and exit code. The sandbox is destroyed and the backend closed after; {@link
   * #stagedWhileRunning} says how many staged mounts there were meanwhile.
   */
  private String runWith(PooledBackend pooled, Path folder, boolean readOnly, String script)
      throws Exception {
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      Sandbox sandbox = backend.start(spec("s", new SandboxMount(folder, "/data", readOnly)));
      try {
        stagedWhileRunning = stagedMounts(pooled).size();
        return run(sandbox, script);
      } finally {
        sandbox.destroy();
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aRootOwned0700Folder_isReadReadOnly_andStaysReadOnly(PooledBackend pooled) throws Exception {
    Path secret = folder("secret", 0, "rwx------");
    assertThat(runWith(pooled, secret, true, "cat /data/given; id -u; touch /data/new || echo no"))
        .startsWith("from the host\n1000\n")
        .endsWith("no\nexit=0");
    assertThat(secret.resolve("new")).doesNotExist();
    assertThat(stagedWhileRunning).isEqualTo(1);
    assertThat(stagedMounts(pooled)).as("detached with its sandbox").isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aRootOwned0755Folder_isWrittenReadWrite_asRoot_onANosuidMount(PooledBackend pooled)
      throws Exception {
    Path shared = folder("shared", 0, "rwxr-xr-x");
    String script =
        "echo made > /data/made; mkdir /data/dir; grep ' /data ' /proc/self/mountinfo; id -u";
    assertThat(runWith(pooled, shared, false, script))
        .contains("nosuid")
        .contains("nodev")
        .endsWith("\n1000\nexit=0");
    assertThat(Files.readString(shared.resolve("made"))).isEqualTo("made\n");
    for (Path made : List.of(shared.resolve("made"), shared.resolve("dir"))) {
      assertThat(uidOf(made)).as("owner of " + made).isZero();
      assertThat(gidOf(made)).as("group of " + made).isZero();
    }
    assertThat(stagedMounts(pooled)).isEmpty();
  }

  /**
   * Every way a shell, Python (where the sandbox has it, else Perl) and coreutils have to give a
   * file in {@code /data} a set-id mode, each of which must print "Operation not permitted", then a
   * plain {@code chmod 755}, which must take.
   */
  private static final String SET_ID_ATTEMPTS =
      "cd /data; touch suid sgid plain; chmod u+s suid; chmod g+s sgid;"
          + " install -m 4755 /dev/null installed;"
          + " if command -v python3 >/dev/null; then"
          + " python3 -c 'import os; os.open(\"created\", os.O_CREAT | os.O_WRONLY, 0o4755)';"
          + " python3 -c 'import os; os.chmod(\"plain\", 0o6755)';"
          + " else"
          + " perl -e 'use Fcntl; sysopen(F, \"created\", O_CREAT | O_WRONLY, 04755)"
          + " or die \"created: $!\\n\"';"
          + " perl -e 'chmod(06755, \"plain\") or die \"plain: $!\\n\"';"
          + " fi; chmod 755 plain && echo plain=ok";

  /**
   * The sandbox is the owner of a root-owned folder mounted read-write, but gives no file there a
   * set-id bit, however it tries: such a file would run as root when run from the host's own mount.
   * A plain mode still takes.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aRootOwnedFolder_getsNoSetIdFileFromTheSandbox_butPlainModes(PooledBackend pooled)
      throws Exception {
    Path shared = folder("setid", 0, "rwxr-xr-x");

    String out = runWith(pooled, shared, false, SET_ID_ATTEMPTS);

    assertThat(out.split("Operation not permitted", -1)).as(out).hasSize(6);
    assertThat(out).contains("plain=ok\n");
    assertThat(shared.resolve("created")).as(out).doesNotExist();
    for (String name : List.of("suid", "sgid", "installed", "plain")) {
      Path file = shared.resolve(name);
      assertThat(uidOf(file)).as("owner of " + name).isZero();
      assertThat(modeOf(file) & 06000).as("set-id bits of " + name + " on the host").isZero();
    }
    assertThat(modeOf(shared.resolve("plain")) & 07777).isEqualTo(0755);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aFolderOfAnotherUid_withMode0700_isUsableReadWrite_andFilesLandAsThatUid(
      PooledBackend pooled) throws Exception {
    Path theirs = folder("theirs", 4321, "rwx------");
    assertThat(runWith(pooled, theirs, false, "cat /data/given; echo made > /data/made"))
        .isEqualTo("from the host\nexit=0");
    assertThat(uidOf(theirs.resolve("made"))).isEqualTo(4321);
    assertThat(gidOf(theirs.resolve("made"))).isEqualTo(4321);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aFolderTheSandboxUserCanUse_keepsItsPlainBind(PooledBackend pooled) throws Exception {
    Path open = folder("open", 0, "rwxrwxrwx");
    assertThat(runWith(pooled, open, false, "echo made > /data/made")).isEqualTo("exit=0");
    assertThat(stagedWhileRunning).isZero();
    assertThat(uidOf(open.resolve("made"))).isEqualTo(pooled.sandboxUid());
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
      // sysfs takes no idmapped mount: the refusal says so.
      assertThatThrownBy(
              () ->
                  backend.start(spec("c3", new SandboxMount(Path.of("/sys/kernel"), "/k", false))))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("host_path /sys/kernel is not writable")
          .hasMessageContaining("cannot be mounted idmapped")
          .hasMessageContaining("EINVAL");
      assertThat(stagedMounts(pooled)).isEmpty();
      assertThat(dataDir.resolve(pooled.name() + "-idmapped").resolve(PooledBackendSuite.INSTANCE))
          .as("nothing staged is left")
          .isEmptyDirectory();
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
