package dev.box.bench;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The process floors Box is compared with: a bare bubblewrap sandbox running {@code /bin/true},
 * {@code /bin/true} started directly, and a child's stdout read through a plain pipe. All are
 * started with {@link ProcessBuilder}, as Box starts its processes, and waited for.
 */
final class ProcessFloors {
  private static final List<String> BWRAP_LOCATIONS =
      List.of("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap");

  /** The directories Box's SandboxArgs links or binds from the host root. */
  private static final List<String> ROOT_DIRS =
      List.of("bin", "sbin", "lib", "lib32", "lib64", "libx32");

  private static final long SPAWN_TIMEOUT_SECONDS = 30;

  /** What the server's stdout pump reads at once. */
  private static final int PIPE_READ = 64 * 1024;

  private ProcessFloors() {}

  /** The bubblewrap binary Box would use; throws when there is none. */
  static Path bwrap() {
    return BWRAP_LOCATIONS.stream()
        .map(Path::of)
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("bwrap not found in " + BWRAP_LOCATIONS));
  }

  /**
   * {@code /bin/true} in a sandbox with the namespaces, capabilities and root file system of a Box
   * session with network off, but none of its extras (etc files, workspace, holder process).
   */
  static List<String> bareBwrapCommand() throws IOException {
    List<String> a = new ArrayList<>();
    a.add(bwrap().toString());
    a.addAll(List.of("--unshare-user", "--uid", "1000", "--gid", "1000"));
    a.addAll(List.of("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"));
    a.add("--unshare-net");
    a.addAll(List.of("--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"));
    a.addAll(List.of("--ro-bind", "/usr", "/usr"));
    for (String dir : ROOT_DIRS) {
      Path host = Path.of("/", dir);
      if (Files.isSymbolicLink(host)) {
        a.addAll(List.of("--symlink", Files.readSymbolicLink(host).toString(), host.toString()));
      } else if (Files.isDirectory(host)) {
        a.addAll(List.of("--ro-bind", host.toString(), host.toString()));
      }
    }
    a.addAll(List.of("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "/bin/true"));
    return List.copyOf(a);
  }

  /** {@code /bin/true} started directly. */
  static List<String> forkExecCommand() {
    return List.of("/bin/true");
  }

  /**
   * Starts {@code command} and reads its stdout to the end through the pipe, {@value #PIPE_READ}
   * bytes at most at a time, as the server does with a managed process's stdout; the time runs from
   * the first byte read to the end.
   *
   * @throws IllegalStateException when it does not exit 0 in time
   */
  static RelayScenarios.Throughput readThroughPipe(List<String> command)
      throws IOException, InterruptedException {
    Process process = builder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    byte[] buffer = new byte[PIPE_READ];
    long bytes = 0;
    long reads = 0;
    long first = 0;
    try (InputStream stdout = process.getInputStream()) {
      int n;
      while ((n = stdout.read(buffer)) >= 0) {
        if (reads++ == 0) {
          first = System.nanoTime();
        }
        bytes += n;
      }
    }
    long end = System.nanoTime();
    awaitSuccess(command, process, "");
    return new RelayScenarios.Throughput(bytes, reads, (end - first) / 1e9);
  }

  /**
   * Starts {@code command}, reads its output to the end and waits for it.
   *
   * @throws IllegalStateException when it does not exit 0 in time, with its output
   */
  static void run(List<String> command) throws IOException, InterruptedException {
    Process process = builder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    awaitSuccess(command, process, output);
  }

  /**
   * {@code command} with stdin from /dev/null, in /, with nothing in its environment but PATH (sbin
   * too: engines run iptables).
   */
  static ProcessBuilder builder(List<String> command) {
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectInput(new File("/dev/null")).directory(new File("/"));
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    return builder;
  }

  private static void awaitSuccess(List<String> command, Process process, String output)
      throws InterruptedException {
    if (!process.waitFor(SPAWN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException(
          command.get(0) + " did not exit within " + SPAWN_TIMEOUT_SECONDS + " s");
    }
    if (process.exitValue() != 0) {
      throw new IllegalStateException(
          String.join(" ", command) + " exited " + process.exitValue() + ": " + output.strip());
    }
  }
}
