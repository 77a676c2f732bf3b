package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxExecutionStatus;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSpec;
import dev.box.cli.ServeProcessTest.Server;
import dev.box.client.BoxClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A mixed load on a real {@code box serve}: sessions created and deleted, execs with large outputs
 * and timeouts, managed processes started and stopped, from several clients. What the server holds
 * (open files, threads, cgroups, host processes, memory) is read from the kernel after a warm-up
 * round of the same load and again at the end: nothing may grow but the JVM's memory, which may
 * settle higher within a bound. {@code -Dbox.soak.rounds=N} makes it longer (the benchmark's soak
 * runs it with many rounds).
 */
class SoakTest {
  private static final int CLIENTS = 4;
  private static final int ROUNDS = Integer.getInteger("box.soak.rounds", 12);

  /** Thread names (digits folded, cut to the kernel's 15 characters) of the cached pools. */
  private static final Pattern ELASTIC =
      Pattern.compile("process reaper|box-exec-pump|box-.*-reade|ForkJoinPool-#-|box-http-#");

  @TempDir Path dataDir;

  /**
   * What the server process holds at one moment; {@code heapKib} is its Java heap in use after a
   * full collection, the measure of a leak that resident memory is too coarse for.
   */
  record Footprint(
      long rssKib,
      long heapKib,
      int fds,
      int threads,
      int cgroups,
      int processes,
      Map<String, Integer> threadNames) {}

  @Test
  void aLongMixedLoad_leavesNothingBehind_andNothingGrows() throws Exception {
    // Exited managed processes are kept (with their output) up to max_completed_processes for
    // completed_process_retention_sec: memory that is bounded by design, not a leak. Without them,
    // any growth of the heap is.
    Server server = Server.serve(dataDir, Map.of("BOX_MAX_COMPLETED_PROCESSES", "0"));
    long pid = server.process().pid();
    try (BoxClient client = server.client(dataDir)) {
      AtomicInteger operations = new AtomicInteger();
      load(client, 2, "warm", operations);
      Footprint before = settled(pid);

      long started = System.nanoTime();
      load(client, ROUNDS, "soak", operations);
      double seconds = (System.nanoTime() - started) / 1e9;
      Footprint after = settled(pid);

      System.out.printf(
          "soak: %d operations in %.1f s; before %s; after %s%n",
          operations.get(), seconds, before, after);
      assertThat(client.sessions()).isEmpty();
      assertThat(after.fds()).as("open files").isLessThanOrEqualTo(before.fds());
      assertThat(after.cgroups()).as("cgroups").isZero();
      assertThat(
              ServeProcessTest.names(ServeProcessTest.cgroupBase(dataDir)).stream()
                  .filter(n -> n.contains(ServeProcessTest.POOL_NAME)))
          .as("pre-started sandboxes: no more than pool_size (2), whatever was taken")
          .hasSizeLessThanOrEqualTo(2);
      assertThat(after.processes()).as("host processes of the data dir but the server").isZero();
      // Threads of the cached pools (pipe pumps, process reapers, virtual-thread carriers, HTTP
      // workers) come and go with the load's concurrency and end after a minute idle: each pool
      // is bounded, far below one thread per session of the soak. Every other thread is fixed.
      after
          .threadNames()
          .forEach(
              (name, count) -> {
                if (ELASTIC.matcher(name).matches()) {
                  assertThat(count).as("threads named %s", name).isLessThanOrEqualTo(32);
                } else {
                  assertThat(count)
                      .as("threads named %s; before %s", name, before.threadNames())
                      .isLessThanOrEqualTo(before.threadNames().getOrDefault(name, 0));
                }
              });
      assertThat(after.heapKib())
          .as("Java heap after a full collection, KiB")
          .isLessThan(before.heapKib() + before.heapKib() / 2 + 16 * 1024);
    } finally {
      server.process().destroy();
      server.process().waitFor();
    }
  }

  /** {@code rounds} rounds of the mixed load from {@link #CLIENTS} clients. */
  private static void load(BoxClient client, int rounds, String name, AtomicInteger operations)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        String prefix = name + "-" + c;
        runs.add(pool.submit(() -> rounds(client, prefix, rounds, operations)));
      }
      for (Future<?> run : runs) {
        run.get();
      }
    } finally {
      pool.shutdown();
    }
  }

  private static Void rounds(BoxClient client, String prefix, int rounds, AtomicInteger ops) {
    for (int i = 0; i < rounds; i++) {
      String id = prefix + "-" + i;
      BoxSpec spec = BoxSpec.builder(id).build();
      client.createSession(spec);
      assertThat(client.exec(spec.toBuilder().cmd("echo hi").build()).stdout()).isEqualTo("hi\n");
      BoxExecutionResult big =
          client.exec(spec.toBuilder().cmd("head -c 3000000 /dev/zero | tr '\\0' x").build());
      assertThat(big.stdoutTruncatedBytes()).as("output is bounded").isPositive();
      if (i % 4 == 0) {
        BoxExecutionResult slow =
            client.exec(spec.toBuilder().cmd("sleep 30 & sleep 30").timeoutSec(1).build());
        assertThat(slow.status()).isEqualTo(BoxExecutionStatus.TIMED_OUT);
      }
      client.startProcess(id, BoxManagedProcessSpec.of("cat"));
      client.stopProcess(id, BoxManagedProcessSpec.DEFAULT_PROCESS_ID);
      client.deleteSession(id);
      ops.addAndGet(i % 4 == 0 ? 7 : 6);
    }
    return null;
  }

  /** The footprint once every session is gone and the counts have stopped falling. */
  private Footprint settled(long pid) throws Exception {
    Footprint[] last = {footprint(pid)};
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () -> {
              Footprint now = footprint(pid);
              boolean steady =
                  now.processes() == 0
                      && now.cgroups() == 0
                      && now.fds() >= last[0].fds()
                      && now.threads() >= last[0].threads();
              last[0] = now;
              return steady;
            });
    return last[0];
  }

  private Footprint footprint(long pid) throws Exception {
    Path proc = Path.of("/proc", Long.toString(pid));
    long rss = 0;
    for (String line : Files.readAllLines(proc.resolve("status"))) {
      if (line.startsWith("VmRSS:")) {
        rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return new Footprint(
        rss,
        heapAfterCollection(pid),
        count(proc.resolve("fd")),
        count(proc.resolve("task")),
        (int)
            ServeProcessTest.names(ServeProcessTest.cgroupBase(dataDir)).stream()
                .filter(n -> !n.contains(ServeProcessTest.POOL_NAME))
                .count(),
        (int)
            ServeProcessTest.hostProcessesContaining(dataDir.toString()).stream()
                .filter(p -> !p.equals(Long.toString(pid)))
                .filter(p -> !commandLine(p).contains(ServeProcessTest.POOL_NAME))
                // The pool's workspace binder lives as long as the server, like its threads.
                .filter(p -> !commandLine(p).contains("/bin/box-mounter"))
                .count(),
        threadNames(proc));
  }

  /** How many of the process's threads bear each name, digits folded. */
  private static Map<String, Integer> threadNames(Path proc) throws IOException {
    Map<String, Integer> names = new java.util.TreeMap<>();
    try (Stream<Path> tasks = Files.list(proc.resolve("task"))) {
      for (Path task : tasks.toList()) {
        try {
          String name = Files.readString(task.resolve("comm")).strip();
          names.merge(name.replaceAll("[0-9]+", "#"), 1, Integer::sum);
        } catch (IOException e) {
          // The thread ended since the listing.
        }
      }
    }
    return names;
  }

  /** The command line of process {@code pid}, or empty once it ended. */
  private static String commandLine(String pid) {
    try {
      return new String(
          Files.readAllBytes(Path.of("/proc", pid, "cmdline")), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  /** The server's heap in use after a full collection, read with the JDK's {@code jcmd}. */
  private static long heapAfterCollection(long pid) throws Exception {
    Path jcmd =
        Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd");
    jcmd(jcmd, pid, "GC.run");
    Matcher used = Pattern.compile("used (\\d+)K").matcher(jcmd(jcmd, pid, "GC.heap_info"));
    assertThat(used.find()).as("jcmd GC.heap_info names the heap in use").isTrue();
    return Long.parseLong(used.group(1));
  }

  private static String jcmd(Path jcmd, long pid, String command) throws Exception {
    Process process =
        new ProcessBuilder(jcmd.toString(), Long.toString(pid), command)
            .redirectErrorStream(true)
            .start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor()).as("jcmd %s: %s", command, out).isZero();
    return out;
  }

  private static int count(Path dir) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      return (int) entries.count();
    }
  }
}
