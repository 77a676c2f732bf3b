package dev.box.fakemachine;

import dev.box.api.internal.FileTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A fake remote machine: a private root directory that stands in for its disk, in which commands
 * run as real local processes under bubblewrap. The host's {@code /usr}, {@code /bin}, {@code /lib}
 * and {@code /etc} are bound read-only (the machine's system), everything else ({@code /home/user},
 * {@code /tmp}, {@code /root}, directories the client creates) is the machine's own; {@code user}
 * is uid 1000, {@code root} is root. Without internet access the processes get an empty network
 * namespace. Every process carries the machine's id in its environment, which is how {@link #kill}
 * finds them all, wherever they were re-parented.
 */
public class FakeMachine {
  /** The uid and gid of {@code user}. */
  public static final int USER_UID = 1000;

  private static final String TAG = "BOX_FAKE_MACHINE";

  /** The machine's id. */
  public final String id;

  /** The machine's disk on the host. */
  public final Path root;

  private final boolean internet;
  private final Map<Integer, Process> processes = new ConcurrentHashMap<>();

  /**
   * Makes the machine's disk in {@code root}; without {@code internet} its processes get no
   * network.
   */
  public FakeMachine(String id, boolean internet, Path root) throws IOException {
    this.id = id;
    this.internet = internet;
    this.root = root;
    Path home = Files.createDirectories(root.resolve("home/user"));
    Files.setAttribute(home, "unix:uid", USER_UID);
    Files.setAttribute(home, "unix:gid", USER_UID);
    Path tmp = Files.createDirectories(root.resolve("tmp"));
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.createDirectories(root.resolve("root"));
    Files.createDirectories(root.resolve("etc-fake"));
    Files.writeString(
        root.resolve("etc-fake/passwd"),
        Files.readString(Path.of("/etc/passwd")) + "user:x:1000:1000::/home/user:/bin/sh\n");
    Files.writeString(
        root.resolve("etc-fake/group"), Files.readString(Path.of("/etc/group")) + "user:x:1000:\n");
  }

  /** Starts {@code cmd args} as {@code user} ({@code root} or {@code user}) in the machine. */
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

  /** Kills every process of the machine, wherever it was re-parented, and deletes its disk. */
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

  /** Forgets the process with {@code pid}, which ended. */
  public void forget(int pid) {
    processes.remove(pid);
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

  /** The process with {@code pid}, if it is one the machine started and did not forget. */
  public Optional<Process> process(int pid) {
    return Optional.ofNullable(processes.get(pid));
  }

  /**
   * The host file for a path in the machine (relative: to {@code /home/user}), or empty when it
   * leaves the machine's own disk (the read-only system directories are not served).
   */
  public Optional<Path> file(String path) {
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
