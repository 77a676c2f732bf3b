package dev.box.bench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The two floors Box is compared with: a bare bubblewrap sandbox running {@code /bin/true}, and
 * {@code /bin/true} started directly. Both are started with {@link ProcessBuilder}, as Box starts
 * its processes, and waited for.
 */
final class ProcessFloors {
  private static final List<String> BWRAP_LOCATIONS =
      List.of("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap");

  /** The directories Box's SandboxArgs links or binds from the host root. */
  private static final List<String> ROOT_DIRS =
      List.of("bin", "sbin", "lib", "lib32", "lib64", "libx32");

  private static final long SPAWN_TIMEOUT_SECONDS = 30;

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
   * Starts {@code command}, reads its output to the end and waits for it.
   *
   * @throws IllegalStateException when it does not exit 0 in time, with its output
   */
  static void run(List<String> command) throws IOException, InterruptedException {
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectInput(new File("/dev/null"))
            .redirectErrorStream(true)
            .directory(new File("/"));
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/bin:/bin");
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
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
