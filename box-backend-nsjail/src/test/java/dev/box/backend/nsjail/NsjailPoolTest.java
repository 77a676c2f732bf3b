package dev.box.backend.nsjail;

import static dev.box.sandbox.SandboxTests.inSandbox;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.PooledBackendSuite;
import dev.box.sandbox.WorkspaceSlots;
import dev.box.testclient.OptionalPiece;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Pre-started nsjail jails, in real jails: the {@linkplain PooledBackendSuite pool suite} every
 * pooled backend passes (a new private workspace takes a jail by having the slot handed over), and
 * what is nsjail's own: a {@code host_path} workspace or one that holds files is joined into a
 * running jail, bound in its own mount namespace. Skipped where nsjail is not installed.
 */
class NsjailPoolTest extends PooledBackendSuite {
  private static final int UID = 2_000_000;

  static List<PooledBackend> pooledBackends() {
    return List.of(
        new PooledBackend("nsjail", NsjailPoolTest::backend, UID, NsjailPoolTest::poolJails));
  }

  private static NsjailBackend backend(Path dataDir, int poolSize) {
    OptionalPiece.assumeNsjail();
    return new NsjailBackend(namespaceSettings(dataDir, INSTANCE, UID, poolSize), null);
  }

  @Test
  void aHostPath_orAWorkspaceWithFiles_isJoinedIntoAPreStartedJail() throws Exception {
    Path managed = hostDir("managed");
    Path operators = hostDir("operators");
    Files.setAttribute(operators, "unix:uid", UID);
    Path used = privateWorkspace(dataDir, "used");
    Files.writeString(used.resolve("kept"), "kept\n");
    List<SandboxSpec> specs =
        List.of(
            pooledSpec("managed", managed, true, false),
            pooledSpec("operators", operators, false, false),
            pooledSpec("used", used, true, false));
    try (NsjailBackend backend = backend(dataDir, 2)) {
      assumeThat(backend.status().available()).as(backend.status().reason()).isTrue();
      assertThat(backend.joinsHostPaths()).isTrue();
      int takes = 0;
      for (SandboxSpec spec : specs) {
        awaitIdle(backend, 2);
        Path host = Objects.requireNonNull(spec.workspace()).hostPath();
        Files.writeString(host.resolve("given"), "from " + spec.sessionId() + "\n");
        inSandbox(
            backend,
            spec,
            sandbox -> {
              assertThat(sandbox.id()).startsWith(INSTANCE + "_pool-");
              assertThat(run(sandbox, "cat given; echo made > made; id -u"))
                  .isEqualTo("from " + spec.sessionId() + "\n1000\nexit=0");
              assertThat(Files.readString(host.resolve("made"))).isEqualTo("made\n");
              assertThat(Files.getAttribute(host.resolve("made"), "unix:uid")).isEqualTo(UID);
              assertThat(run(sandbox, "grep ' /workspace ' /proc/self/mountinfo | tail -1"))
                  .contains("nosuid")
                  .contains("nodev");
            });
        assertThat(backend.pooledTakes()).isEqualTo(++takes);
        assertThat(host.resolve("made")).as("the workspace outlives its jail").exists();
      }
      assertThat(Files.readString(used.resolve("kept"))).isEqualTo("kept\n");
      assertThat(WorkspaceSlots.mountPointsUnder(hostDirs))
          .as("nothing mounted on the host")
          .isEmpty();
    }
    assertThat(dataDir.resolve("nsjail-pool")).as("no slot is left").isEmptyDirectory();
  }

  /** The nsjail processes of pool jails (not their supervisors, whose arguments name them too). */
  private static List<String> poolJails(Path dataDir) {
    String config = dataDir.resolve("nsjail").resolve(INSTANCE + "_pool-").toString();
    return ProcessHandle.allProcesses()
        .filter(h -> h.info().command().orElse("").endsWith("/nsjail"))
        .filter(
            h ->
                Stream.of(h.info().arguments().orElse(new String[0]))
                    .anyMatch(a -> a.startsWith(config)))
        .map(h -> Long.toString(h.pid()))
        .toList();
  }
}
