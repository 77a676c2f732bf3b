package dev.box.backend.bwrap;

import static dev.box.sandbox.SandboxTests.inSandbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.Cidr;
import dev.box.core.Hashes;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.PooledBackendSuite;
import dev.box.sandbox.SandboxShape;
import dev.box.sandbox.WorkspaceSlots;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Pre-started bubblewrap sandboxes, in real sandboxes: the {@linkplain PooledBackendSuite pool
 * suite} every pooled backend passes, and what is bubblewrap's own: a host directory as the
 * workspace is bound into a running sandbox by box-mounter, {@code nosuid,nodev}, and detached
 * after; a request differing in any shape field starts fresh; closing the backend removes the
 * pool's cgroups; the next instance sweeps a pool whose server did not close.
 */
class SandboxPoolTest extends PooledBackendSuite {
  static List<PooledBackend> pooledBackends() {
    return List.of(
        new PooledBackend(
            "bwrap",
            (dir, size) -> backend(dir, INSTANCE, size),
            BwrapBackend.DEFAULT_SANDBOX_UID,
            dir -> poolProcesses(dir).stream().map(h -> Long.toString(h.pid())).toList()));
  }

  /** A backend of the default sandbox uid with the syscall filter and the exec agent. */
  static BwrapBackend backend(Path dataDir, String instance, int poolSize) {
    return new BwrapBackend(
        namespaceSettings(dataDir, instance, BwrapBackend.DEFAULT_SANDBOX_UID, poolSize));
  }

  @Test
  void aHostDirectory_isBoundIntoAPreStartedSandbox_nosuidNodev_byTheMounter_andDetachedAfter()
      throws Exception {
    Path host = hostDir("ws");
    Files.writeString(host.resolve("given"), "from the host\n");
    try (BwrapBackend backend = backend(dataDir, INSTANCE, 2)) {
      awaitIdle(backend, 2);
      inSandbox(
          backend,
          pooledSpec("s1", host, SandboxShape.pooled().memoryMb()),
          sandbox -> {
            assertThat(sandbox.preStarted()).isTrue();
            assertThat(backend.pooledTakes()).isEqualTo(1);
            assertThat(run(sandbox, "cat given; echo made > made"))
                .isEqualTo("from the host\nexit=0");
            assertThat(Files.getAttribute(host.resolve("made"), "unix:uid"))
                .isEqualTo(BwrapBackend.DEFAULT_SANDBOX_UID);
            assertThat(run(sandbox, "grep ' /workspace ' /proc/self/mountinfo | tail -1"))
                .contains("nosuid")
                .contains("nodev");
          });
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
    try (BwrapBackend backend = backend(dataDir, INSTANCE, 2)) {
      awaitIdle(backend, 2);
      int i = 0;
      for (UnaryOperator<SandboxSpec> difference : differences) {
        SandboxSpec spec =
            difference.apply(pooledSpec("d" + i++, host, SandboxShape.pooled().memoryMb()));
        assertThat(SandboxShape.of(spec)).isNotEqualTo(SandboxShape.pooled());
        try {
          inSandbox(
              backend,
              spec,
              sandbox ->
                  assertThat(sandbox.id()).as(spec.toString()).isEqualTo(spec.sandboxName()));
        } catch (BoxException e) {
          // Network on where this host cannot keep it off the host: refused, and not pooled either.
          assertThat(spec.network()).as(e.getMessage()).isEqualTo(BoxNetworkMode.ON);
        }
      }
      assertThat(backend.pooledTakes()).isZero();
      assertThat(backend.status().enforced().get("pool")).startsWith("2 of 2 ");
    }
  }

  @Test
  void closingTheBackend_removesThePoolsCgroups() throws Exception {
    BwrapBackend backend = backend(dataDir, INSTANCE, 2);
    try {
      awaitIdle(backend, 2);
      assertThat(poolCgroups()).isNotEmpty();
    } finally {
      backend.close();
    }
    assertThat(poolCgroups()).isEmpty();
  }

  @Test
  void theNextInstance_removesThePoolAndTheSlotMountsOfOneThatDidNotClose() throws Exception {
    BwrapBackend crashed = backend(dataDir, INSTANCE, 2);
    try {
      awaitIdle(crashed, 2);
      crashed.start(pooledSpec("s1", hostDir("ws"), SandboxShape.pooled().memoryMb()));
      assertThat(poolProcesses(dataDir)).isNotEmpty();
      try (BwrapBackend next = backend(dataDir, "next", 0)) {
        next.removeOrphans();
        await().atMost(Duration.ofSeconds(30)).until(() -> poolProcesses(dataDir).isEmpty());
        assertThat(poolCgroups()).isEmpty();
        assertThat(slotMounts()).isEmpty();
        assertThat(hostDirs.resolve("ws")).as("the workspace itself is kept").isDirectory();
      }
    } finally {
      crashed.close();
    }
  }

  /** The bwrap processes of {@code dataDir}'s pooled sandboxes. */
  private static List<ProcessHandle> poolProcesses(Path dataDir) {
    String tag = baseName(dataDir) + "/" + INSTANCE + "_pool-";
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
    String base = baseName(dataDir);
    try (Stream<Path> dirs = Files.walk(Path.of("/sys/fs/cgroup"), 8)) {
      return dirs.filter(Files::isDirectory)
          .filter(p -> p.toString().contains("/" + base + "/" + INSTANCE + "_pool-"))
          .toList();
    }
  }

  private List<Path> slotMounts() {
    return WorkspaceSlots.mountPointsUnder(dataDir.resolve("bwrap-pool"));
  }

  private static String baseName(Path dataDir) {
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
          s.persistent(),
          null);
    }
  }
}
