package dev.box.backend.e2b;

import dev.box.api.internal.FileTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One sandbox of {@link FakeE2b}: a private root directory that stands in for the VM's disk, in
 * which commands run as real local processes under bubblewrap. The host's {@code /usr}, {@code
 * /bin}, {@code /lib} and {@code /etc} are bound read-only (the template's system), everything else
 * ({@code /home/user}, {@code /tmp}, {@code /root}, mount points the client creates) is the VM's
 * own; {@code user} is uid 1000, {@code root} is root. Without internet access the processes get an
 * empty network namespace. Every process carries the VM's id in its environment, which is how the
 * fake finds them all when the VM is killed. Public for the fakes of other remote backends, whose
 * boxes run their commands the same way.
 */
public final class FakeVm {
  static final int USER_UID = 1000;
  private static final String TAG = "E2B_FAKE_VM";

  final String id;
  final String accessToken;
  final String template;
  final Map<String, String> metadata;
  final boolean internet;

  /** The VM's disk on the host. */
  public final Path root;

  volatile long expiresAtNanos;
  final Map<Integer, Process> processes = new ConcurrentHashMap<>();

  /** Makes the VM's disk in {@code root}; without {@code internet} its processes get no network. */
  public FakeVm(
      String id,
      String accessToken,
      String template,
      Map<String, String> metadata,
      boolean internet,
      Path root)
      throws IOException {
    this.id = id;
    this.accessToken = accessToken;
    this.template = template;
    this.metadata = Map.copyOf(metadata);
    this.internet = internet;
    this.root = root;
    Path home = Files.createDirectories(root.resolve("home/user"));
    Files.setAttribute(home, "unix:uid", USER_UID);
    Files.setAttribute(home, "unix:gid", USER_UID);
    Path tmp = Files.createDirectories(root.resolve("tmp"));
    Files.setPosixFilePermissions(
        tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.createDirectories(root.resolve("root"));
    Files.createDirectories(root.resolve("etc-fake"));
    Files.writeString(
        root.resolve("etc-fake/passwd"),
        Files.readString(Path.of("/etc/passwd")) + "user:x:1000:1000::/home/user:/bin/sh\n");
    Files.writeString(
        root.resolve("etc-fake/group"), Files.readString(Path.of("/etc/group")) + "user:x:1000:\n");
  }

  /** Starts {@code cmd args} as {@code user} in the VM. */
  public Process start(
      String user, String cmd, List<String> args, Map<String, String> envs, String cwd)
      throws IOException {
    List<String> argv = new ArrayList<>(List.of("/usr/bin/bwrap", "--bind", root.toString(), "/"));
    for (String system : List.of("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc")) {
      if (Files.exists(Path.of(system))) {
        argv.addAll(List.of("--ro-bind", system, system));
      }
    }
    argv.addAll(List.of("--ro-bind", root.resolve("etc-fake/passwd").toString(), "/etc/passwd"));
    argv.addAll(List.of("--ro-bind", root.resolve("etc-fake/group").toString(), "/etc/group"));
    argv.addAll(List.of("--proc", "/proc", "--dev", "/dev"));
    if (!internet) {
      argv.add("--unshare-net");
    }
    argv.addAll(List.of("--chdir", cwd, "--"));
    if (!user.equals("root")) {
      argv.addAll(
          List.of(
              "/usr/bin/setpriv",
              "--reuid=" + USER_UID,
              "--regid=" + USER_UID,
              "--clear-groups",
              "--"));
    }
    argv.add(cmd);
    argv.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(argv);
    builder.environment().clear();
    builder.environment().putAll(envs);
    builder.environment().put(TAG, id);
    Process process = builder.start();
    processes.put((int) process.pid(), process);
    return process;
  }

  /** Kills every process of the VM, wherever it was re-parented, and deletes its disk. */
  public void kill() {
    String tag = TAG + "=" + id;
    for (int round = 0; round < 50; round++) {
      List<ProcessHandle> found = ProcessHandle.allProcesses().filter(h -> tagged(h, tag)).toList();
      if (found.isEmpty()) {
        break;
      }
      found.forEach(ProcessHandle::destroyForcibly);
      for (ProcessHandle h : found) {
        try {
          h.onExit().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
          // Looked for again in the next round.
        }
      }
    }
    // A temp directory; the fake's own close deletes what is left.
    FileTrees.deleteTreeQuietly(root);
  }

  private static boolean tagged(ProcessHandle h, String tag) {
    try {
      byte[] environ = Files.readAllBytes(Path.of("/proc", Long.toString(h.pid()), "environ"));
      for (String entry : new String(environ, StandardCharsets.UTF_8).split("\0")) {
        if (entry.equals(tag)) {
          return true;
        }
      }
    } catch (IOException e) {
      // Gone, or not ours to read.
    }
    return false;
  }

  /** The process with {@code pid}, if it is one the VM started. */
  Optional<Process> process(int pid) {
    return Optional.ofNullable(processes.get(pid));
  }

  /**
   * The host file for an absolute path in the VM, or empty when it leaves the VM's own disk (the
   * read-only system directories are not served).
   */
  Optional<Path> file(String path) {
    String absolute = path.startsWith("/") ? path : "/home/user/" + path;
    Path resolved = root.resolve(absolute.substring(1)).normalize();
    if (!resolved.startsWith(root) || resolved.equals(root)) {
      return Optional.empty();
    }
    String first = root.relativize(resolved).getName(0).toString();
    if (List.of("usr", "bin", "sbin", "lib", "lib64", "lib32", "etc", "etc-fake", "proc", "dev")
        .contains(first)) {
      return Optional.empty();
    }
    return Optional.of(resolved);
  }
}
