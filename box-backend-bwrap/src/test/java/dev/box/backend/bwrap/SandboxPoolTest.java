package dev.box.backend.bwrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.Cidr;
import dev.box.core.Hashes;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pre-started bubblewrap sandboxes, in real sandboxes: a session of the pooled shape takes one and
 * finds its own workspace in it; any other shape gets a fresh sandbox; closing the backend leaves
 * no pooled sandbox, cgroup or slot mount behind; and a pool of size 0 is no pool.
 */
class SandboxPoolTest {
  private static final int UID = 2_000_000;

  @TempDir Path dataDir;
  @TempDir Path hostDirs;

  private BwrapBackend backend(int poolSize) {
    return new BwrapBackend(
        dataDir,
        "inst",
        true,
        UID,
        EgressPolicy.DEFAULT,
        SyscallGuard.install(dataDir),
        true,
        poolSize,
        BackendRuntime.system());
  }

  /** A spec of the pooled shape whose workspace is {@code host}, as LangBot's sessions are. */
  private static SandboxSpec pooledSpec(String session, Path host) {
    SandboxShape shape = SandboxShape.pooled();
    return new SandboxSpec(
        session,
        "inst_" + session,
        "inst",
        "img",
        BoxNetworkMode.OFF,
        new SandboxMount(host, "/workspace", false, true),
        List.of(),
        shape.readOnlyRootfs(),
        shape.cpus(),
        shape.memoryMb(),
        shape.pidsLimit(),
        BoxEgress.NONE,
        true);
  }

  private Path hostDir(String name) throws IOException {
    return Files.createDirectories(hostDirs.resolve(name)).toRealPath();
  }

  private static void awaitIdle(BwrapBackend backend, int idle) {
    await().atMost(Duration.ofSeconds(30)).until(() -> pool(backend).startsWith(idle + " of "));
  }

  private static String pool(BwrapBackend backend) {
    return backend.status().enforced().getOrDefault("pool", "");
  }

  /** Runs {@code script} in {@code sandbox}: its output and exit code. */
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
  void aSessionOfThePooledShape_takesAPreStartedSandbox_withItsOwnWorkspaceBound()
      throws Exception {
    Path host = hostDir("ws");
    Files.writeString(host.resolve("given"), "from the host\n");
    try (BwrapBackend backend = backend(2)) {
      awaitIdle(backend, 2);
      Sandbox sandbox = backend.start(pooledSpec("s1", host));
      try {
        assertThat(sandbox.id()).startsWith("inst_pool-");
        assertThat(backend.pooledTakes()).isEqualTo(1);
        assertThat(run(sandbox, "cat given; echo made > made; pwd; id -u"))
            .isEqualTo("from the host\n/workspace\n1000\nexit=0");
        assertThat(Files.readString(host.resolve("made"))).isEqualTo("made\n");
        assertThat(Files.getAttribute(host.resolve("made"), "unix:uid")).isEqualTo(UID);
        assertThat(run(sandbox, "grep ' /workspace ' /proc/self/mountinfo | tail -1"))
            .contains("nosuid")
            .contains("nodev");
        awaitIdle(backend, 2);
      } finally {
        sandbox.destroy();
      }
      assertThat(slotMounts())
          .as("the session's slot is detached")
          .allMatch(p -> p.getFileName().toString().matches("slots|staging"));
      assertThat(host.resolve("made")).as("the workspace outlives its sandbox").exists();
      assertThat(backend.slotsMountDirectly())
          .as("bound and detached by box-mounter, not by mount(8)")
          .isTrue();
    }
  }

  @Test
  void aRequestDifferingInAnyShapeField_getsAFreshSandbox() throws Exception {
    Path host = hostDir("ws");
    Path other = hostDir("other");
    List<UnaryOperator<SandboxSpec>> differences =
        List.of(
            s -> with(s, b -> b.network = BoxNetworkMode.ON),
            s -> with(s, b -> b.workspace = null),
            s -> with(s, b -> b.workspace = new SandboxMount(host, "/workspace", true, false)),
            s -> with(s, b -> b.workspace = new SandboxMount(host, "/work", false, true)),
            s -> with(s, b -> b.extraMounts = List.of(new SandboxMount(other, "/x", true))),
            s -> with(s, b -> b.readOnlyRootfs = !b.readOnlyRootfs),
            s -> with(s, b -> b.cpus = b.cpus + 0.5),
            s -> with(s, b -> b.memoryMb = b.memoryMb - 1),
            s -> with(s, b -> b.pidsLimit = b.pidsLimit - 1),
            s ->
                with(
                    s,
                    b -> b.egress = new BoxEgress(List.of(Cidr.parse("10.0.0.0/8")), List.of())));
    try (BwrapBackend backend = backend(2)) {
      awaitIdle(backend, 2);
      int i = 0;
      for (UnaryOperator<SandboxSpec> difference : differences) {
        SandboxSpec spec = difference.apply(pooledSpec("d" + i++, host));
        assertThat(SandboxShape.of(spec)).isNotEqualTo(SandboxShape.pooled());
        try {
          Sandbox sandbox = backend.start(spec);
          try {
            assertThat(sandbox.id()).as(spec.toString()).isEqualTo(spec.sandboxName());
          } finally {
            sandbox.destroy();
          }
        } catch (BoxException e) {
          // Network on where this host cannot keep it off the host: refused, and not pooled either.
          assertThat(spec.network()).as(e.getMessage()).isEqualTo(BoxNetworkMode.ON);
        }
      }
      assertThat(backend.pooledTakes()).isZero();
      assertThat(pool(backend)).startsWith("2 of 2 ");
    }
  }

  @Test
  void fiveSessionsAtOnce_onAPoolOfTwo_allRun_andThoseBeyondThePoolStartFresh() throws Exception {
    try (BwrapBackend backend = backend(2);
        ExecutorService threads = Executors.newFixedThreadPool(5)) {
      awaitIdle(backend, 2);
      List<Future<String>> results = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        Path host = hostDir("c" + i);
        SandboxSpec spec = pooledSpec("c" + i, host);
        Callable<String> session =
            () -> {
              Sandbox sandbox = backend.start(spec);
              try {
                assertThat(run(sandbox, "echo " + spec.sessionId() + " > id; cat id"))
                    .isEqualTo(spec.sessionId() + "\nexit=0");
                return sandbox.id();
              } finally {
                sandbox.destroy();
              }
            };
        results.add(threads.submit(session));
      }
      List<String> ids = new ArrayList<>();
      for (Future<String> result : results) {
        ids.add(result.get());
      }
      long pooled = ids.stream().filter(id -> id.startsWith("inst_pool-")).count();
      assertThat(ids).doesNotHaveDuplicates();
      assertThat(pooled).isEqualTo(backend.pooledTakes()).isGreaterThanOrEqualTo(2);
      assertThat(ids.stream().filter(id -> id.startsWith("inst_c")))
          .as("the others start fresh under their own names")
          .hasSize(5 - (int) pooled);
      for (int i = 0; i < 5; i++) {
        assertThat(Files.readString(hostDirs.resolve("c" + i).resolve("id")))
            .isEqualTo("c" + i + "\n");
      }
      awaitIdle(backend, 2);
    }
  }

  @Test
  void closingTheBackend_destroysEveryIdleSandbox_itsCgroups_andItsSlotMounts() throws Exception {
    BwrapBackend backend = backend(2);
    Sandbox taken;
    try {
      awaitIdle(backend, 2);
      taken = backend.start(pooledSpec("s1", hostDir("ws")));
      awaitIdle(backend, 2);
      assertThat(poolProcesses()).hasSize(3);
      assertThat(slotMounts()).isNotEmpty();
      taken.destroy();
    } finally {
      backend.close();
    }
    assertThat(poolProcesses()).isEmpty();
    assertThat(poolCgroups()).isEmpty();
    assertThat(slotMounts()).isEmpty();
    assertThat(dataDir.resolve("bwrap-pool").resolve("inst")).doesNotExist();
  }

  @Test
  void theNextInstance_removesThePoolAndTheSlotMountsOfOneThatDidNotClose() throws Exception {
    BwrapBackend crashed = backend(2);
    try {
      awaitIdle(crashed, 2);
      crashed.start(pooledSpec("s1", hostDir("ws")));
      assertThat(poolProcesses()).isNotEmpty();
      try (BwrapBackend next =
          new BwrapBackend(
              dataDir,
              "next",
              true,
              UID,
              EgressPolicy.DEFAULT,
              SyscallGuard.install(dataDir),
              true,
              0,
              BackendRuntime.system())) {
        next.removeOrphans();
        await().atMost(Duration.ofSeconds(30)).until(() -> poolProcesses().isEmpty());
        assertThat(poolCgroups()).isEmpty();
        assertThat(slotMounts()).isEmpty();
        assertThat(hostDirs.resolve("ws")).as("the workspace itself is kept").isDirectory();
      }
    } finally {
      crashed.close();
    }
  }

  @Test
  void poolSizeZero_startsEverySandboxFresh_asBefore() throws Exception {
    try (BwrapBackend backend = backend(0)) {
      assertThat(pool(backend)).startsWith("none");
      assertThat(poolProcesses()).isEmpty();
      Sandbox sandbox = backend.start(pooledSpec("s1", hostDir("ws")));
      try {
        assertThat(sandbox.id()).isEqualTo("inst_s1");
        assertThat(run(sandbox, "echo ok > f; cat f")).isEqualTo("ok\nexit=0");
      } finally {
        sandbox.destroy();
      }
      assertThat(backend.pooledTakes()).isZero();
      assertThat(dataDir.resolve("bwrap-pool")).doesNotExist();
    }
  }

  /** The bwrap processes of this data directory's pooled sandboxes. */
  private List<ProcessHandle> poolProcesses() {
    String tag = baseName() + "/inst_pool-";
    return ProcessHandle.allProcesses()
        .filter(
            h ->
                h.info().command().map(c -> c.endsWith("/bwrap")).orElse(false)
                    && Stream.of(h.info().arguments().orElse(new String[0]))
                        .anyMatch(a -> a.startsWith(tag)))
        .toList();
  }

  /** The cgroup directories of this data directory's pooled sandboxes. */
  private List<Path> poolCgroups() throws IOException {
    String base = baseName();
    try (Stream<Path> dirs = Files.walk(Path.of("/sys/fs/cgroup"), 8)) {
      return dirs.filter(Files::isDirectory)
          .filter(p -> p.toString().contains("/" + base + "/inst_pool-"))
          .toList();
    }
  }

  private List<Path> slotMounts() {
    return WorkspaceSlots.mountPointsUnder(dataDir.resolve("bwrap-pool"));
  }

  private String baseName() {
    return "box-" + Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
  }

  /** {@code spec} with what {@code change} sets on a mutable copy of it. */
  private static SandboxSpec with(SandboxSpec spec, java.util.function.Consumer<Fields> change) {
    Fields f = new Fields(spec);
    change.accept(f);
    return f.build(spec);
  }

  /** The shape fields of a spec, to change one at a time. */
  private static final class Fields {
    BoxNetworkMode network;
    @Nullable SandboxMount workspace;
    List<SandboxMount> extraMounts;
    boolean readOnlyRootfs;
    double cpus;
    int memoryMb;
    int pidsLimit;
    BoxEgress egress;

    Fields(SandboxSpec s) {
      network = s.network();
      workspace = s.workspace();
      extraMounts = s.extraMounts();
      readOnlyRootfs = s.readOnlyRootfs();
      cpus = s.cpus();
      memoryMb = s.memoryMb();
      pidsLimit = s.pidsLimit();
      egress = s.egress();
    }

    SandboxSpec build(SandboxSpec s) {
      return new SandboxSpec(
          s.sessionId(),
          s.sandboxName(),
          s.instanceId(),
          s.image(),
          network,
          workspace,
          extraMounts,
          readOnlyRootfs,
          cpus,
          memoryMb,
          pidsLimit,
          egress,
          s.persistent());
    }
  }
}
