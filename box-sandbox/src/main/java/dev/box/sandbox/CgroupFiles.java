package dev.box.sandbox;

import dev.box.api.time.Ticker;
import dev.box.core.backend.SandboxUsage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * File operations on cgroup directories, shared by the v1 and v2 drivers. Removing a cgroup goes
 * through an {@link Rmdir}, the one operation a plain directory tree does not do as cgroupfs does.
 * The waits for the kernel to empty a cgroup read a {@link Ticker} and pause through a {@link
 * Sleeper}, so that tests can let that time pass without waiting.
 */
final class CgroupFiles {

  private static final long RETRY_MILLIS = 5;

  private static final long EMPTY_WAIT_NANOS = 3_000_000_000L;

  /**
   * Removes a cgroup's directory if it exists. On cgroupfs that is rmdir, which takes the control
   * files along and fails while the cgroup has children or processes.
   */
  @FunctionalInterface
  interface Rmdir {
    void remove(Path dir) throws IOException;
  }

  /** Pauses between two tries. */
  @FunctionalInterface
  interface Sleeper {
    void sleep(long millis) throws InterruptedException;
  }

  private final Rmdir rmdir;
  private final Ticker ticker;
  private final Sleeper sleeper;

  /** The kernel's cgroup filesystems, waited for in the time of {@code ticker}. */
  static CgroupFiles kernel(Ticker ticker) {
    return new CgroupFiles(Files::deleteIfExists, ticker, Thread::sleep);
  }

  /** Files removed by {@code rmdir}, waiting in the time of {@code ticker} and {@code sleeper}. */
  CgroupFiles(Rmdir rmdir, Ticker ticker, Sleeper sleeper) {
    this.rmdir = rmdir;
    this.ticker = ticker;
    this.sleeper = sleeper;
  }

  /** Removes the cgroup {@code dir} if it exists; fails while it has children or processes. */
  void removeDir(Path dir) throws IOException {
    rmdir.remove(dir);
  }

  /**
   * Removes the process cgroup {@code group}, then {@code alongside} when there is one (v1's memory
   * cgroup of the group), if no process is left in {@code group}. What cannot go yet (a process
   * joined meanwhile, or teardown is not finished) stays for the sandbox's teardown to remove.
   */
  void releaseIfEmpty(Path group, @Nullable Path alongside) {
    if (!pids(group).isEmpty()) {
      return;
    }
    try {
      removeDir(group);
      if (alongside != null) {
        removeDir(alongside);
      }
    } catch (IOException e) {
      // A process joined meanwhile, or teardown is not finished: the sandbox removes it.
    }
  }

  static void write(Path file, String value) throws IOException {
    Files.writeString(file, value, StandardCharsets.US_ASCII);
  }

  /**
   * The number {@code file} holds (a cgroup counter such as {@code memory.current}), or {@link
   * SandboxUsage#UNMEASURED} when it cannot be read.
   */
  static long number(Path file) {
    try {
      return Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).strip());
    } catch (IOException | NumberFormatException e) {
      return SandboxUsage.UNMEASURED;
    }
  }

  /**
   * The value of {@code key} in the flat keyed file {@code file} ({@code memory.stat}, {@code
   * cpu.stat}: a key and a number per line), or {@link SandboxUsage#UNMEASURED} when it has none or
   * cannot be read.
   */
  static long keyed(Path file, String key) {
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
        String[] f = line.strip().split(" ");
        if (f.length == 2 && f[0].equals(key)) {
          return Long.parseLong(f[1]);
        }
      }
    } catch (IOException | NumberFormatException e) {
      return SandboxUsage.UNMEASURED;
    }
    return SandboxUsage.UNMEASURED;
  }

  /**
   * The usage of a sandbox from its counters: {@code memoryBytes} with the page cache, of which
   * {@code cacheBytes} is cache; either unmeasured makes the memory unmeasured.
   */
  static SandboxUsage usage(long cpuNanos, long memoryBytes, long cacheBytes) {
    if (memoryBytes < 0 || cacheBytes < 0) {
      return new SandboxUsage(cpuNanos, SandboxUsage.UNMEASURED, SandboxUsage.UNMEASURED);
    }
    return new SandboxUsage(cpuNanos, Math.max(0, memoryBytes - cacheBytes), cacheBytes);
  }

  /** The pids in {@code dir}/cgroup.procs; empty when the directory is gone. */
  static List<Long> pids(Path dir) {
    List<Long> pids = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
        if (!line.isBlank()) {
          pids.add(Long.parseLong(line.strip()));
        }
      }
    } catch (NoSuchFileException e) {
      return pids;
    } catch (IOException | NumberFormatException e) {
      return pids;
    }
    return pids;
  }

  /** The child cgroup directories of {@code dir}. */
  static List<Path> children(Path dir) {
    List<Path> children = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, Files::isDirectory)) {
      entries.forEach(children::add);
    } catch (IOException e) {
      return children;
    }
    return children;
  }

  /**
   * Sends SIGKILL to every process in {@code dir} and its descendants until they are empty:
   * processes forked between two reads are caught by the next one, and the pids limit bounds how
   * many there can be.
   */
  boolean killAll(Path dir) {
    long deadline = ticker.read() + EMPTY_WAIT_NANOS;
    while (true) {
      List<Long> pids = allPids(dir);
      if (pids.isEmpty()) {
        return true;
      }
      for (long pid : pids) {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        handle.ifPresent(ProcessHandle::destroyForcibly);
      }
      if (ticker.read() > deadline) {
        return false;
      }
      Thread.onSpinWait();
      sleepBriefly();
    }
  }

  /**
   * Waits until the content of {@code file} satisfies {@code reached}, or a deadline passes: the
   * kernel freezes a cgroup's processes asynchronously, each at its next return to user space.
   *
   * @return whether it did
   */
  boolean await(Path file, Predicate<String> reached) {
    long deadline = ticker.read() + EMPTY_WAIT_NANOS;
    while (true) {
      try {
        if (reached.test(Files.readString(file, StandardCharsets.US_ASCII))) {
          return true;
        }
      } catch (IOException e) {
        return false;
      }
      if (ticker.read() > deadline) {
        return false;
      }
      sleepBriefly();
    }
  }

  /** Sends SIGTERM to every process in {@code dir} and its descendants but {@code except}. */
  static void terminateAll(Path dir, long except) {
    for (long pid : allPids(dir)) {
      if (pid != except) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy);
      }
    }
  }

  private static List<Long> allPids(Path dir) {
    List<Long> pids = new ArrayList<>(pids(dir));
    for (Path child : children(dir)) {
      pids.addAll(allPids(child));
    }
    return pids;
  }

  /**
   * Removes {@code dir} and its child cgroups, retrying while the kernel still tears down exited
   * processes (pid and net namespace teardown is asynchronous).
   */
  boolean removeTree(Path dir) {
    for (Path child : children(dir)) {
      removeTree(child);
    }
    long deadline = ticker.read() + EMPTY_WAIT_NANOS;
    while (true) {
      try {
        rmdir.remove(dir);
        return true;
      } catch (IOException e) {
        if (ticker.read() > deadline) {
          return false;
        }
        sleepBriefly();
      }
    }
  }

  /** Removes {@code dir} when it has no child cgroup and no process; leaves it otherwise. */
  void removeIfEmpty(Path dir) {
    if (children(dir).isEmpty() && pids(dir).isEmpty()) {
      try {
        rmdir.remove(dir);
      } catch (IOException e) {
        // Another server of the same data dir created a sandbox meanwhile: it stays.
      }
    }
  }

  private void sleepBriefly() {
    try {
      sleeper.sleep(RETRY_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
