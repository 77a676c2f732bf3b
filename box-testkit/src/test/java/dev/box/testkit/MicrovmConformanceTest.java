package dev.box.testkit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.BoxDataDir;
import dev.box.backend.microvm.MicrovmBackend;
import dev.box.testclient.HostProcesses;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The conformance suite against the microvm backend: real QEMU micro-VMs under TCG. Its host-side
 * objects are the VMs' directories ({@code <state dir>/microvm/vms/<sandbox>}) and the QEMU
 * processes whose command line names one of them. Run only when {@code
 * BOX_TEST_MICROVM_CONFORMANCE=1} and {@code scripts/microvm} has prepared the VMs' files. Slow:
 * every session boots a kernel.
 */
class MicrovmConformanceTest extends BackendConformanceSuite {
  @Override
  protected String backendName() {
    return "microvm";
  }

  @Override
  protected Map<String, String> serverSettings() {
    // Under TCG a few cases cannot pass yet (docs/BACKENDS.md says which): run on request only.
    assumeTrue(
        "1".equals(System.getenv("BOX_TEST_MICROVM_CONFORMANCE")),
        "the microvm conformance run is asked for with BOX_TEST_MICROVM_CONFORMANCE=1");
    Path files = MicrovmBackend.filesDir(System.getenv("BOX_MICROVM_CACHE"));
    assumeTrue(
        Files.isRegularFile(files.resolve("microvm.env")),
        "no micro-VM files in " + files + ": run scripts/microvm");
    return Map.of();
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    List<String> vms =
        dataDirs().stream()
            .map(d -> BoxDataDir.stateDir(d).resolve("microvm").resolve("vms"))
            .peek(dir -> listInto(dir, found))
            .map(dir -> dir + "/")
            .toList();
    ProcessHandle.allProcesses()
        .forEach(
            h ->
                HostProcesses.commandLine(h.pid()).stream()
                    .filter(arg -> vms.stream().anyMatch(arg::contains))
                    .findFirst()
                    .ifPresent(arg -> found.add("qemu pid " + h.pid() + " " + arg)));
    return found;
  }

  private static void listInto(Path vms, Set<String> found) {
    if (!Files.isDirectory(vms)) {
      return;
    }
    try (Stream<Path> dirs = Files.list(vms)) {
      dirs.forEach(d -> found.add("vm directory " + d));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Kills the VM's QEMU, as an operator or the OOM killer might. */
  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    SandboxProcesses.killFromOutside(
        h ->
            HostProcesses.commandLine(h.pid()).stream()
                .anyMatch(a -> a.contains("/microvm/vms/" + backendSessionId + "/")),
        "qemu");
  }
}
