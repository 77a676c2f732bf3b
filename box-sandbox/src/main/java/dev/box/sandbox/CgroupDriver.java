package dev.box.sandbox;

import dev.box.core.backend.SandboxUsage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Creates, limits and empties the cgroups of sandboxes. One implementation per cgroup layout (v1,
 * v2), and one that enforces nothing where cgroups cannot be written.
 */
public interface CgroupDriver {

  /** For each limit, how it is enforced ({@code cgroup-v1}, {@code cgroup-v2}) or {@code none}. */
  Map<String, String> enforced();

  /** Whether the sandboxes' cgroups can {@linkplain SessionCgroup#freeze freeze}. */
  default boolean freezes() {
    return false;
  }

  /** Creates the cgroup of one sandbox with its limits. */
  SessionCgroup createSession(String name, int memoryMb, int pidsLimit, double cpus);

  /** Kills the processes of, and removes, every sandbox cgroup whose name lacks {@code prefix}. */
  void removeOthers(String prefix);

  /** Removes the driver's base cgroups if no sandbox cgroup is left in them. */
  void close();

  /** The cgroups of one sandbox. */
  interface SessionCgroup {

    /**
     * Creates the cgroup of one process tree spawned in the sandbox.
     *
     * @param memoryMb a memory limit of the tree's own within the sandbox's, or 0 for none
     */
    ProcessCgroup createProcessGroup(int memoryMb);

    /**
     * Freezes every process of the sandbox, returning once the kernel says all are frozen;
     * idempotent. Processes that join later (through {@link ProcessCgroup#procsFiles}) freeze too.
     *
     * @throws IllegalStateException when they cannot be frozen (then none stays frozen)
     */
    default void freeze() {
      throw new IllegalStateException("the sandbox's cgroups cannot freeze");
    }

    /**
     * Thaws what {@link #freeze} froze; idempotent.
     *
     * @throws IllegalStateException when the cgroup cannot be written
     */
    default void thaw() {
      throw new IllegalStateException("the sandbox's cgroups cannot freeze");
    }

    /**
     * What the sandbox's processes use, from its cgroups' counters; what no cgroup counts here is
     * unmeasured. Never throws.
     */
    default SandboxUsage usage() {
      return SandboxUsage.UNKNOWN;
    }

    /** Kills every process in the sandbox's cgroups (frozen ones included) and removes them. */
    void destroy();
  }

  /** The cgroup of one spawned process tree. */
  interface ProcessCgroup {

    /** The {@code cgroup.procs} files a launcher writes its pid into before it execs. */
    List<Path> procsFiles();

    /** Kills every process in the group, waiting until it is empty or a deadline passes. */
    void kill();

    /**
     * Sends SIGTERM to every process in the group but {@code launcherPid}, without waiting: the
     * host-side launcher reports the process's own exit code, so it must outlive the signal.
     */
    void terminate(long launcherPid);

    /** Removes the group if it is empty; a group with survivors stays until the sandbox ends. */
    void releaseIfEmpty();

    /**
     * The address-space rlimit in KiB the launcher applies where no cgroup limits memory, or 0 when
     * a cgroup does.
     */
    default long addressSpaceLimitKib() {
      return 0;
    }
  }
}
