package dev.box.backend.docker;

import dev.box.core.agent.AgentProcess;
import dev.box.sandbox.EmptyCgroups;
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
 *
 * <p>A tree's cgroup that ends empty is kept for the container's next tree: making and removing one
 * for each exec cost two directory operations of the cgroup file system. They are as many as there
 * were trees at once, at most, and {@link #removeEmptyTrees()} removes them when the container
 * goes; the engine removes whatever is left (a tree with survivors) with the container.
 */
final class ContainerCgroup {
  private static final Path V1_PIDS = Path.of("/sys/fs/cgroup/pids");
  private static final Path V2 = Path.of("/sys/fs/cgroup");
  private static final long KILL_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final Path dir;
  private final EmptyCgroups emptyTrees = new EmptyCgroups();

  /** {@code dir}: the container's cgroup directory. */
  ContainerCgroup(Path dir) {
    this.dir = dir;
  }

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

  /** The container's cgroup directory. */
  Path dir() {
    return dir;
  }

  /** The cgroup of one process tree: one an earlier tree left empty, else a new one. */
  Tree newTree(String name) throws IOException {
    Path tree = emptyTrees.take();
    return new Tree(tree != null ? tree : Files.createDirectory(dir.resolve(name)));
  }

  /** Removes the trees kept for reuse: the container is being removed. */
  void removeEmptyTrees() {
    emptyTrees.takeAll().forEach(ContainerCgroup::releaseIfEmpty);
  }

  /**
   * One process tree's cgroup. Once released it is done with: a kill or a terminate after the
   * release does nothing, and one under way finishes before the cgroup is kept for the next tree,
   * so no signal meant for this tree reaches the next one's processes.
   */
  final class Tree implements AgentProcess.Tree {
    private final Path path;
    private boolean released;

    private Tree(Path path) {
      this.path = path;
    }

    /** Moves {@code hostPid} into the tree. */
    void admit(long hostPid) throws IOException {
      Files.writeString(path.resolve("cgroup.procs"), Long.toString(hostPid));
    }

    @Override
    public synchronized void terminate() {
      if (!released) {
        ContainerCgroup.terminate(path);
      }
    }

    @Override
    public synchronized void kill() {
      if (!released) {
        ContainerCgroup.kill(path);
      }
    }

    /** Keeps the cgroup for the next tree when it is provably empty; else leaves it be. */
    @Override
    public synchronized void release() {
      if (released || !EmptyCgroups.provablyEmpty(path)) {
        return;
      }
      released = true;
      emptyTrees.keep(path);
    }
  }

  /** Sends SIGTERM to every process of {@code tree}. */
  private static void terminate(Path tree) {
    pids(tree).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
  }

  /** Kills every process of {@code tree}, waiting until it is empty or a few seconds passed. */
  private static void kill(Path tree) {
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
  private static void releaseIfEmpty(Path tree) {
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
