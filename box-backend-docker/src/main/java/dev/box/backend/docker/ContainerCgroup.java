package dev.box.backend.docker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The cgroup of a container's processes, as the host sees it, and the cgroups of the process trees
 * Box starts in it: one child cgroup each, in the pids hierarchy (cgroup v1) or the unified tree
 * (v2), with no controller of its own, so the container's limits still apply to everything. The
 * server moves each process into its tree's cgroup before it runs and kills a tree by its cgroup.
 * The engine removes the children with the container.
 *
 * @param dir the container's cgroup directory
 */
record ContainerCgroup(Path dir) {
  private static final Path V1_PIDS = Path.of("/sys/fs/cgroup/pids");
  private static final Path V2 = Path.of("/sys/fs/cgroup");
  private static final long KILL_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** Whether this host has a cgroup tree the container backends can place process trees in. */
  static boolean hostSupported() {
    return Files.isDirectory(V1_PIDS) || Files.exists(V2.resolve("cgroup.controllers"));
  }

  /** The cgroup of the process {@code hostPid} (the container's init), read from /proc. */
  static ContainerCgroup of(long hostPid) throws IOException {
    List<String> lines = Files.readAllLines(Path.of("/proc", Long.toString(hostPid), "cgroup"));
    String unified = null;
    for (String line : lines) {
      String[] parts = line.split(":", 3);
      if (parts.length != 3) {
        continue;
      }
      if (List.of(parts[1].split(",")).contains("pids") && Files.isDirectory(V1_PIDS)) {
        return new ContainerCgroup(under(V1_PIDS, parts[2]));
      }
      if (parts[0].equals("0") && parts[1].isEmpty()) {
        unified = parts[2];
      }
    }
    if (unified != null && Files.exists(V2.resolve("cgroup.controllers"))) {
      return new ContainerCgroup(under(V2, unified));
    }
    throw new IOException("no pids cgroup for process " + hostPid);
  }

  private static Path under(Path root, String path) throws IOException {
    Path dir = root.resolve(path.startsWith("/") ? path.substring(1) : path).normalize();
    if (!dir.startsWith(root) || !Files.isDirectory(dir)) {
      throw new IOException("cgroup " + path + " is not under " + root);
    }
    return dir;
  }

  /** The {@code cgroup.procs} of the container's own cgroup, where what its agent forks starts. */
  Path procs() {
    return dir.resolve("cgroup.procs");
  }

  /** A new cgroup for one process tree. */
  Path createTree(String name) throws IOException {
    Path tree = dir.resolve(name);
    Files.createDirectory(tree);
    return tree;
  }

  /** Moves {@code hostPid} into {@code tree}. */
  static void admit(Path tree, long hostPid) throws IOException {
    Files.writeString(tree.resolve("cgroup.procs"), Long.toString(hostPid));
  }

  /** Sends SIGTERM to every process of {@code tree}. */
  static void terminate(Path tree) {
    pids(tree).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
  }

  /** Kills every process of {@code tree}, waiting until it is empty or a few seconds passed. */
  static void kill(Path tree) {
    long deadline = System.nanoTime() + KILL_WAIT_NANOS;
    List<Long> left = pids(tree);
    while (!left.isEmpty() && System.nanoTime() < deadline) {
      left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      left = pids(tree);
    }
  }

  /**
   * Removes {@code tree} when it is empty; a tree with survivors stays until the container ends.
   */
  static void releaseIfEmpty(Path tree) {
    try {
      Files.deleteIfExists(tree);
    } catch (IOException e) {
      // Busy: processes of it still run (a background process); the engine removes it later.
    }
  }

  private static List<Long> pids(Path tree) {
    try {
      return Files.readAllLines(tree.resolve("cgroup.procs")).stream()
          .map(String::strip)
          .filter(s -> !s.isEmpty())
          .map(Long::valueOf)
          .toList();
    } catch (IOException e) {
      // Gone (NoSuchFileException) or unreadable: nothing left to signal.
      return List.of();
    }
  }
}
