package dev.box.sandbox;

import static dev.box.sandbox.SandboxTests.inSandbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.guard.SyscallGuard;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What every backend with pre-started sandboxes does alike, in real sandboxes: a session of the
 * pooled shape with a new private workspace takes a waiting sandbox and shares that workspace with
 * the host; another shape starts a sandbox of its own; sessions beyond the pool start fresh;
 * closing the backend leaves no pre-started sandbox and no slot; a pool of size 0 is no pool.
 *
 * <p>A backend's pool test extends this suite with a static {@code pooledBackends()} that lists
 * what to run it on ({@link PooledBackend}), and keeps the cases only that backend has beside it. A
 * backend whose tool or engine is missing here is skipped by an assumption, not failed.
 */
public abstract class PooledBackendSuite {
  /** The instance id the backends run as. */
  public static final String INSTANCE = "inst";

  /** The data directory the backend under test runs on, new for each test. */
  @TempDir protected Path dataDir;

  /** Where a test makes the host directories it gives its sessions, new for each test. */
  @TempDir protected Path hostDirs;

  /**
   * One backend under test.
   *
   * @param name the backend's name, as its pool directory is ({@code <name>-pool})
   * @param open opens it on a data directory, as instance {@link #INSTANCE}, with a pool size
   * @param sandboxUid the host uid that owns what the sandbox user writes to its workspace
   * @param preStarted finds the host processes (or containers) of a data directory's pre-started
   *     sandboxes, waiting or taken
   */
  public record PooledBackend(String name, Opener open, int sandboxUid, Finder preStarted) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** Opens a backend. */
  @FunctionalInterface
  public interface Opener {
    SandboxBackend open(Path dataDir, int poolSize);
  }

  /** Finds what runs of a data directory's pre-started sandboxes. */
  @FunctionalInterface
  public interface Finder {
    List<String> find(Path dataDir) throws IOException;
  }

  /** Opens {@code backend}, skipping the test where it cannot run here. */
  private static SandboxBackend open(PooledBackend backend, Path dataDir, int poolSize) {
    SandboxBackend opened = backend.open().open(dataDir, poolSize);
    if (!opened.status().available()) {
      opened.close();
    }
    assumeThat(opened.status().available()).as(opened.status().reason()).isTrue();
    return opened;
  }

  /**
   * The settings a pool test opens a namespace backend with: cgroups, the syscall guard and the
   * exec agent on, the default egress policy.
   */
  public static NamespaceSettings namespaceSettings(
      Path dataDir, String instance, int sandboxUid, int poolSize) {
    return new NamespaceSettings(
        dataDir,
        instance,
        true,
        sandboxUid,
        EgressPolicy.DEFAULT,
        SyscallGuard.install(dataDir),
        true,
        poolSize,
        BackendRuntime.system());
  }

  /** A spec of the pooled shape with the workspace {@code host}, a new private one. */
  public static SandboxSpec pooledSpec(String session, Path host, int memoryMb) {
    return pooledSpec(session, new SandboxMount(host, "/workspace", false, true), memoryMb, false);
  }

  /**
   * A spec of the pooled shape with the workspace {@code host} at {@code /workspace}, read-write.
   *
   * @param boxOwned whether Box made {@code host} (a private workspace, a managed root's), not an
   *     operator
   * @param persistent whether the session is persistent
   */
  public static SandboxSpec pooledSpec(
      String session, Path host, boolean boxOwned, boolean persistent) {
    return pooledSpec(
        session,
        new SandboxMount(host, "/workspace", false, boxOwned),
        SandboxShape.pooled().memoryMb(),
        persistent);
  }

  /**
   * A spec of the pooled shape but for {@code workspace} and {@code memoryMb} (the pooled shape's
   * is {@code SandboxShape.pooled().memoryMb()}), of the pool's image.
   */
  public static SandboxSpec pooledSpec(
      String session, SandboxMount workspace, int memoryMb, boolean persistent) {
    SandboxShape shape = SandboxShape.pooled();
    return new SandboxSpec(
        session,
        INSTANCE + "_" + session,
        INSTANCE,
        BoxSpec.DEFAULT_IMAGE,
        BoxNetworkMode.OFF,
        workspace,
        List.of(),
        shape.readOnlyRootfs(),
        shape.cpus(),
        memoryMb,
        shape.pidsLimit(),
        BoxEgress.NONE,
        persistent,
        null);
  }

  /** A new host directory {@code name}, by its real path, for a test to give a session. */
  protected Path hostDir(String name) throws IOException {
    return Files.createDirectories(hostDirs.resolve(name)).toRealPath();
  }

  /** A new, empty private workspace, as the session manager creates one. */
  public static Path privateWorkspace(Path dataDir, String name) throws IOException {
    return Files.createDirectories(dataDir.resolve("workspaces").resolve(name))
        .toAbsolutePath()
        .normalize();
  }

  /** Waits until {@code idle} sandboxes wait in {@code backend}'s pool. */
  public static void awaitIdle(SandboxBackend backend, int idle) {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(backend.status().enforced().getOrDefault("pool", ""))
                    .startsWith(idle + " of "));
  }

  /** Runs {@code script} in {@code sandbox}'s workspace: its output and exit code. */
  public static String run(Sandbox sandbox, String script) throws Exception {
    SandboxProcess p =
        sandbox.spawn(
            new ProcessSpec(
                new ProcessSpec.Shell("{ " + script + "\n} 2>&1"), "/workspace", Map.of(), false));
    try {
      String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
      return out + "exit=" + p.waitFor(Duration.ofSeconds(30)).orElse(-1);
    } finally {
      p.release();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void aNewPrivateWorkspace_takesAPreStartedSandbox_sharedWithTheHost(PooledBackend pooled)
      throws Exception {
    try (SandboxBackend backend = open(pooled, dataDir, 2)) {
      awaitIdle(backend, 2);
      Path workspace = privateWorkspace(dataDir, "s1");
      inSandbox(
          backend,
          pooledSpec("s1", workspace, SandboxShape.pooled().memoryMb()),
          sandbox -> {
            assertThat(sandbox.preStarted()).isTrue();
            assertThat(sandbox.id()).contains(INSTANCE + "_pool-");
            Files.writeString(workspace.resolve("given"), "from the host\n");
            assertThat(run(sandbox, "cat given; echo made > made; pwd; id -u"))
                .isEqualTo("from the host\n/workspace\n1000\nexit=0");
            assertThat(Files.readString(workspace.resolve("made"))).isEqualTo("made\n");
            assertThat(Files.getAttribute(workspace.resolve("made"), "unix:uid"))
                .isEqualTo(pooled.sandboxUid());
            awaitIdle(backend, 2);
          });
      assertThat(workspace.resolve("made")).as("the workspace outlives its sandbox").exists();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void anotherShape_getsASandboxOfItsOwn(PooledBackend pooled) throws Exception {
    try (SandboxBackend backend = open(pooled, dataDir, 2)) {
      awaitIdle(backend, 2);
      inSandbox(
          backend,
          pooledSpec("m", privateWorkspace(dataDir, "m"), SandboxShape.pooled().memoryMb() - 1),
          sandbox -> {
            assertThat(sandbox.preStarted()).isFalse();
            assertThat(sandbox.id()).doesNotContain("_pool-");
            assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\nexit=0");
          });
      assertThat(backend.poolLevel()).isEqualTo(new PoolLevel(2, 2));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void fiveSessionsAtOnce_onAPoolOfTwo_allRun_andThoseBeyondThePoolStartFresh(PooledBackend pooled)
      throws Exception {
    try (SandboxBackend backend = open(pooled, dataDir, 2);
        ExecutorService threads = Executors.newFixedThreadPool(5)) {
      awaitIdle(backend, 2);
      List<Future<Boolean>> results = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        Path workspace = privateWorkspace(dataDir, "c" + i);
        SandboxSpec spec = pooledSpec("c" + i, workspace, SandboxShape.pooled().memoryMb());
        Callable<Boolean> session =
            () -> {
              Sandbox sandbox = backend.start(spec);
              try {
                assertThat(run(sandbox, "echo " + spec.sessionId() + " > id; cat id"))
                    .isEqualTo(spec.sessionId() + "\nexit=0");
                return sandbox.preStarted();
              } finally {
                sandbox.destroy();
              }
            };
        results.add(threads.submit(session));
      }
      int pooledTakes = 0;
      for (Future<Boolean> result : results) {
        pooledTakes += result.get() ? 1 : 0;
      }
      assertThat(pooledTakes).as("the waiting ones are taken").isGreaterThanOrEqualTo(2);
      for (int i = 0; i < 5; i++) {
        assertThat(Files.readString(dataDir.resolve("workspaces").resolve("c" + i).resolve("id")))
            .isEqualTo("c" + i + "\n");
      }
      awaitIdle(backend, 2);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void sessionsBackToBack_drainingAPoolOfTwo_eachTakeTheSandboxTheRefillStarts(PooledBackend pooled)
      throws Exception {
    List<Sandbox> sandboxes = new ArrayList<>();
    try (SandboxBackend backend = open(pooled, dataDir, 2)) {
      awaitIdle(backend, 2);
      try {
        for (int i = 0; i < 5; i++) {
          Path workspace = privateWorkspace(dataDir, "b" + i);
          Sandbox sandbox =
              backend.start(pooledSpec("b" + i, workspace, SandboxShape.pooled().memoryMb()));
          sandboxes.add(sandbox);
          // From the third on the pool is empty: each waits for the start under way.
          assertThat(sandbox.preStarted()).as("session b%d is pre-started", i).isTrue();
          assertThat(run(sandbox, "echo b" + i)).isEqualTo("b" + i + "\nexit=0");
        }
      } finally {
        sandboxes.forEach(Sandbox::destroy);
      }
      awaitIdle(backend, 2);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void closingTheBackend_leavesNoPreStartedSandbox_andNoSlot(PooledBackend pooled)
      throws Exception {
    SandboxBackend backend = open(pooled, dataDir, 2);
    try {
      awaitIdle(backend, 2);
      Sandbox taken =
          backend.start(
              pooledSpec("s1", privateWorkspace(dataDir, "s1"), SandboxShape.pooled().memoryMb()));
      awaitIdle(backend, 2);
      assertThat(pooled.preStarted().find(dataDir)).hasSize(3);
      taken.destroy();
    } finally {
      backend.close();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> pooled.preStarted().find(dataDir).isEmpty());
    Path poolRoot = dataDir.toAbsolutePath().normalize().resolve(pooled.name() + "-pool");
    assertThat(WorkspaceSlots.mountPointsUnder(poolRoot)).isEmpty();
    assertThat(poolRoot.resolve(INSTANCE)).doesNotExist();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pooledBackends")
  void poolSizeZero_startsEverySandboxFresh(PooledBackend pooled) throws Exception {
    try (SandboxBackend backend = open(pooled, dataDir, 0)) {
      assertThat(backend.status().enforced().get("pool")).startsWith("none");
      assertThat(backend.poolLevel()).isNull();
      inSandbox(
          backend,
          pooledSpec("s1", privateWorkspace(dataDir, "s1"), SandboxShape.pooled().memoryMb()),
          sandbox -> {
            assertThat(sandbox.preStarted()).isFalse();
            assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\nexit=0");
          });
      assertThat(pooled.preStarted().find(dataDir)).isEmpty();
      assertThat(dataDir.resolve(pooled.name() + "-pool")).doesNotExist();
    }
  }
}
