package dev.box.backend.nsjail;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.SandboxShape;
import dev.box.sandbox.WorkspaceSlots;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pre-started nsjail jails, in real jails: a session of the pooled shape with a new private
 * workspace takes one and shares its workspace with the host; a {@code host_path} workspace or one
 * that holds files is joined into one (bound in its own mount namespace); another shape gets a jail
 * of its own; closing the backend leaves no pooled jail and no slot; a pool of size 0 is no pool.
 */
class NsjailPoolTest {
  private static final int UID = 2_000_000;

  @TempDir Path dataDir;
  @TempDir Path hostDirs;

  private NsjailBackend backend(int poolSize) {
    NsjailBackend backend =
        new NsjailBackend(
            dataDir,
            "inst",
            true,
            UID,
            EgressPolicy.DEFAULT,
            SyscallGuard.install(dataDir),
            null,
            true,
            poolSize,
            BackendRuntime.system());
    assumeThat(backend.status().available()).as(backend.status().reason()).isTrue();
    return backend;
  }

  /** A spec of the pooled shape with the workspace {@code host}. */
  private static SandboxSpec spec(String session, Path host, boolean boxOwned, int memoryMb) {
    SandboxShape shape = SandboxShape.pooled();
    return new SandboxSpec(
        session,
        "inst_" + session,
        "inst",
        "img",
        BoxNetworkMode.OFF,
        new SandboxMount(host, "/workspace", false, boxOwned),
        List.of(),
        shape.readOnlyRootfs(),
        shape.cpus(),
        memoryMb,
        shape.pidsLimit(),
        BoxEgress.NONE,
        false);
  }

  /** A new, empty private workspace, as the session manager creates one. */
  private Path privateWorkspace(String name) throws IOException {
    return Files.createDirectories(dataDir.resolve("workspaces").resolve(name))
        .toAbsolutePath()
        .normalize();
  }

  private static void awaitIdle(NsjailBackend backend, int idle) {
    await().atMost(Duration.ofSeconds(30)).until(() -> pool(backend).startsWith(idle + " of "));
  }

  private static String pool(NsjailBackend backend) {
    return backend.status().enforced().getOrDefault("pool", "");
  }

  private static String run(Sandbox sandbox, String script) throws Exception {
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

  @Test
  void aNewPrivateWorkspace_takesAPreStartedJail_sharedWithTheHost() throws Exception {
    try (NsjailBackend backend = backend(2)) {
      awaitIdle(backend, 2);
      Path workspace = privateWorkspace("s1");
      Sandbox sandbox =
          backend.start(spec("s1", workspace, true, SandboxShape.pooled().memoryMb()));
      try {
        assertThat(sandbox.id()).startsWith("inst_pool-");
        assertThat(backend.pooledTakes()).isEqualTo(1);
        Files.writeString(workspace.resolve("given"), "from the host\n");
        assertThat(run(sandbox, "cat given; echo made > made; pwd; id -u"))
            .isEqualTo("from the host\n/workspace\n1000\nexit=0");
        assertThat(Files.readString(workspace.resolve("made"))).isEqualTo("made\n");
        assertThat(Files.getAttribute(workspace.resolve("made"), "unix:uid")).isEqualTo(UID);
        awaitIdle(backend, 2);
      } finally {
        sandbox.destroy();
      }
      assertThat(workspace.resolve("made")).as("the workspace outlives its jail").exists();
    }
  }

  @Test
  void aHostPath_orAWorkspaceWithFiles_isJoinedIntoAPreStartedJail() throws Exception {
    Path managed = Files.createDirectories(hostDirs.resolve("managed")).toRealPath();
    Path operators = Files.createDirectories(hostDirs.resolve("operators")).toRealPath();
    Files.setAttribute(operators, "unix:uid", UID);
    Path used = privateWorkspace("used");
    Files.writeString(used.resolve("kept"), "kept\n");
    int memory = SandboxShape.pooled().memoryMb();
    List<SandboxSpec> specs =
        List.of(
            spec("managed", managed, true, memory),
            spec("operators", operators, false, memory),
            spec("used", used, true, memory));
    try (NsjailBackend backend = backend(2)) {
      assertThat(backend.joinsHostPaths()).isTrue();
      int takes = 0;
      for (SandboxSpec spec : specs) {
        awaitIdle(backend, 2);
        Path host = java.util.Objects.requireNonNull(spec.workspace()).hostPath();
        Files.writeString(host.resolve("given"), "from " + spec.sessionId() + "\n");
        Sandbox sandbox = backend.start(spec);
        try {
          assertThat(sandbox.id()).startsWith("inst_pool-");
          assertThat(backend.pooledTakes()).isEqualTo(++takes);
          assertThat(run(sandbox, "cat given; echo made > made; id -u"))
              .isEqualTo("from " + spec.sessionId() + "\n1000\nexit=0");
          assertThat(Files.readString(host.resolve("made"))).isEqualTo("made\n");
          assertThat(Files.getAttribute(host.resolve("made"), "unix:uid")).isEqualTo(UID);
          assertThat(run(sandbox, "grep ' /workspace ' /proc/self/mountinfo | tail -1"))
              .contains("nosuid")
              .contains("nodev");
        } finally {
          sandbox.destroy();
        }
        assertThat(host.resolve("made")).as("the workspace outlives its jail").exists();
      }
      assertThat(Files.readString(used.resolve("kept"))).isEqualTo("kept\n");
      assertThat(WorkspaceSlots.mountPointsUnder(hostDirs))
          .as("nothing mounted on the host")
          .isEmpty();
    }
    assertThat(dataDir.resolve("nsjail-pool")).as("no slot is left").isEmptyDirectory();
  }

  @Test
  void anotherShape_getsAJailOfItsOwn() throws Exception {
    try (NsjailBackend backend = backend(2)) {
      awaitIdle(backend, 2);
      SandboxSpec spec =
          spec("m", privateWorkspace("m"), true, SandboxShape.pooled().memoryMb() - 1);
      Sandbox sandbox = backend.start(spec);
      try {
        assertThat(sandbox.id()).isEqualTo(spec.sandboxName());
        assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\nexit=0");
      } finally {
        sandbox.destroy();
      }
      assertThat(backend.pooledTakes()).isZero();
      assertThat(pool(backend)).startsWith("2 of 2 ");
    }
  }

  @Test
  void closingTheBackend_leavesNoPooledJail_andNoSlot() throws Exception {
    NsjailBackend backend = backend(2);
    try {
      awaitIdle(backend, 2);
      Sandbox taken =
          backend.start(spec("s1", privateWorkspace("s1"), true, SandboxShape.pooled().memoryMb()));
      awaitIdle(backend, 2);
      assertThat(poolJails()).hasSize(3);
      taken.destroy();
    } finally {
      backend.close();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> poolJails().isEmpty());
    assertThat(dataDir.resolve("nsjail-pool").resolve("inst")).doesNotExist();
  }

  @Test
  void poolSizeZero_startsEveryJailFresh_asBefore() throws Exception {
    try (NsjailBackend backend = backend(0)) {
      assertThat(pool(backend)).startsWith("none");
      Sandbox sandbox =
          backend.start(spec("s1", privateWorkspace("s1"), true, SandboxShape.pooled().memoryMb()));
      try {
        assertThat(sandbox.id()).isEqualTo("inst_s1");
        assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\nexit=0");
      } finally {
        sandbox.destroy();
      }
      assertThat(poolJails()).isEmpty();
      assertThat(dataDir.resolve("nsjail-pool")).doesNotExist();
    }
  }

  /** The nsjail processes of this data directory's pooled jails (by their configuration file). */
  private List<ProcessHandle> poolJails() {
    String config = dataDir.resolve("nsjail").resolve("inst_pool-").toString();
    return ProcessHandle.allProcesses()
        .filter(
            h ->
                Stream.of(h.info().arguments().orElse(new String[0]))
                    .anyMatch(a -> a.startsWith(config)))
        .toList();
  }
}
