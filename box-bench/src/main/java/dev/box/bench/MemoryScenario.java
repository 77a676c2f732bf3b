package dev.box.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * The memory an idle session costs: the growth of the server's heap, and the proportional set size
 * (Pss) of the sandbox processes, which are all descendants of this JVM. Pss divides shared pages
 * among their users, so the sum is what the sessions add to the host; it does not count kernel
 * memory (namespaces, page tables, mounts), which the MemAvailable drop shows, noisily.
 */
final class MemoryScenario {
  private static final int GC_ROUNDS = 3;

  private final BenchClient client;

  MemoryScenario(BenchClient client) {
    this.client = client;
  }

  /**
   * What {@link #measure} found, in bytes per session.
   *
   * @param sessions how many idle sessions were held
   * @param heapBytes growth of the used heap after full collections
   * @param pssBytes growth of the summed Pss of this JVM's descendants
   * @param processes growth of the number of this JVM's descendants
   * @param memAvailableBytes drop of the host's MemAvailable
   * @param createSeconds how long creating the sessions took
   */
  record Result(
      int sessions,
      double heapBytes,
      double pssBytes,
      double processes,
      double memAvailableBytes,
      double createSeconds) {}

  /** Creates {@code sessions} idle sessions, measures, and deletes them. */
  Result measure(int sessions) throws IOException, InterruptedException {
    Snapshot before = Snapshot.take();
    List<String> ids = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < sessions; i++) {
      String id = "bench-idle-" + i;
      ids.add(id);
      client.create(id);
    }
    double createSeconds = (System.nanoTime() - start) / 1e9;
    Snapshot after = Snapshot.take();
    for (String id : ids) {
      client.delete(id);
    }
    return new Result(
        sessions,
        (double) (after.heapUsed - before.heapUsed) / sessions,
        (double) (after.pss - before.pss) / sessions,
        (double) (after.processes - before.processes) / sessions,
        (double) (before.memAvailable - after.memAvailable) / sessions,
        createSeconds);
  }

  private record Snapshot(long heapUsed, long pss, int processes, long memAvailable) {
    static Snapshot take() throws IOException {
      MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      for (int i = 0; i < GC_ROUNDS; i++) {
        System.gc();
      }
      long heap = memory.getHeapMemoryUsage().getUsed();
      List<Long> pids = ProcessHandle.current().descendants().map(ProcessHandle::pid).toList();
      long pss = 0;
      for (long pid : pids) {
        pss += pssBytes(pid);
      }
      return new Snapshot(heap, pss, pids.size(), meminfoBytes("MemAvailable:"));
    }
  }

  /** The Pss of {@code pid} from smaps_rollup; 0 when the process is gone or a zombie. */
  private static long pssBytes(long pid) {
    try {
      List<String> lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "smaps_rollup"));
      return kibibytes(lines, "Pss:").orElse(0) * 1024;
    } catch (IOException e) {
      return 0;
    }
  }

  /** A field of /proc/meminfo, in bytes. */
  static long meminfoBytes(String field) throws IOException {
    return kibibytes(Files.readAllLines(Path.of("/proc/meminfo")), field)
            .orElseThrow(() -> new IOException("no " + field + " in /proc/meminfo"))
        * 1024;
  }

  /** The number after {@code field} on the line that starts with it (a size in kB). */
  private static OptionalLong kibibytes(List<String> lines, String field) {
    for (String line : lines) {
      if (line.startsWith(field)) {
        String rest = line.substring(field.length()).strip();
        int end = rest.indexOf(' ');
        return OptionalLong.of(Long.parseLong(end < 0 ? rest : rest.substring(0, end)));
      }
    }
    return OptionalLong.empty();
  }
}
