package dev.box.testkit;

import dev.box.api.BoxDataDir;
import dev.box.backend.microvm.MicrovmBackend;
import dev.box.core.agent.AgentSockets;
import dev.box.testclient.HostProcesses;
import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The conformance suite against the microvm backend: real QEMU micro-VMs (under TCG here). Its
 * host-side objects are the VMs' directories ({@code <state dir>/microvm/vms/<sandbox>}) and the
 * QEMU processes named after one of them ({@code -name <sandbox>}: QEMU runs in its VM's directory
 * and names its files relatively), and the relays of network-on VMs ({@code box-agent --relay} with
 * a socket in a server's agent socket directory); a VM of the pool that no session has taken yet (a
 * {@code pool-} directory without the backend's {@code taken-by} file) is not a leftover, as the
 * other backends' idle pooled sandboxes are not. Needs what {@code scripts/microvm} prepares
 * ({@code BOX_TEST_REQUIRE=microvm} turns its absence into a failure). Slow: a session that the
 * pool cannot serve boots a kernel (a network-on session always does).
 */
class MicrovmConformanceTest extends BackendConformanceSuite {
  @Override
  protected String backendName() {
    return "microvm";
  }

  @Override
  protected Map<String, String> serverSettings() {
    return settings();
  }

  /**
   * The Docker engine and test image of the container suites: with the engine there, the backend
   * declares {@code images}, and the suite's image (the server's default) boots the default root.
   * The test is skipped (or failed, when required) without the VMs' files.
   */
  static Map<String, String> settings() {
    Path files = MicrovmBackend.filesDir(System.getenv("BOX_MICROVM_CACHE"));
    OptionalPiece.MICROVM.assumePresent(
        Files.isRegularFile(files.resolve("microvm.env")),
        "no micro-VM files in " + files + ": run scripts/microvm");
    return ContainerEngines.serverSettings("docker");
  }

  /** Under TCG a VM boots in seconds and runs a command several times slower than the host. */
  @Override
  protected int patienceFactor() {
    return 4;
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    List<String> vms = new ArrayList<>();
    List<String> socketDirs = new ArrayList<>();
    for (Path dataDir : dataDirs()) {
      socketDirs.add(AgentSockets.root(BoxDataDir.stateDir(dataDir)) + "/");
      for (Path vm : vmDirectories(BoxDataDir.stateDir(dataDir).resolve("microvm/vms"))) {
        if (!idlePooled(vm)) {
          found.add("vm directory " + vm);
          vms.add(vm.getFileName().toString());
        }
      }
    }
    ProcessHandle.allProcesses()
        .forEach(
            h -> {
              String name = qemuName(h.pid());
              if (name != null && vms.contains(name)) {
                found.add("qemu pid " + h.pid() + " -name " + name);
              }
              String relay = relaySocket(h.pid());
              if (relay != null && socketDirs.stream().anyMatch(relay::startsWith)) {
                found.add("relay pid " + h.pid() + " " + relay);
              }
            });
    return found;
  }

  /** The VM name a QEMU process was given ({@code -name}), or null for any other process. */
  private static @Nullable String qemuName(long pid) {
    List<String> argv = HostProcesses.commandLine(pid);
    int at = argv.indexOf("-name");
    return at > 0 && at + 1 < argv.size() && argv.get(0).contains("qemu") ? argv.get(at + 1) : null;
  }

  /**
   * The socket of a network-on VM's relay ({@code box-agent --relay SOCKET PORT}), or null for any
   * other process: a pooled VM has the network off and no relay, so every relay serves a session.
   */
  private static @Nullable String relaySocket(long pid) {
    List<String> argv = HostProcesses.commandLine(pid);
    int at = argv.indexOf("--relay");
    return at > 0 && at + 1 < argv.size() && argv.get(0).endsWith("box-agent")
        ? argv.get(at + 1)
        : null;
  }

  /**
   * Whether the VM of {@code dir} waits in the pool: a live server keeps up to {@code pool_size} of
   * them and boots one after each take, so they are not a session's leftovers. A taken one counts
   * like any other VM; closing the backend destroys the idle ones ({@code VmPoolTest}).
   */
  private static boolean idlePooled(Path dir) {
    return dir.getFileName().toString().startsWith("pool-")
        && !Files.exists(dir.resolve(MicrovmBackend.TAKEN_BY));
  }

  private static List<Path> vmDirectories(Path vms) {
    if (!Files.isDirectory(vms)) {
      return List.of();
    }
    try (Stream<Path> dirs = Files.list(vms)) {
      return dirs.toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Kills the VM's QEMU, as an operator or the OOM killer might. */
  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    SandboxProcesses.killFromOutside(h -> backendSessionId.equals(qemuName(h.pid())), "qemu");
  }
}
