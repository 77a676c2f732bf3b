package dev.box.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the whole benchmark, with real sandboxes, at a tiny scale. It asserts that the run
 * completes, reports every measurement and target, and leaves no sandbox behind; never how fast
 * anything was.
 */
class BoxBenchTest {

  @Test
  void tinyRun_printsEveryRowAndTarget_andLeavesNoSandboxBehind(@TempDir Path dir)
      throws Exception {
    Path markdown = dir.resolve("bench.md");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    BenchReport report = BoxBench.run(new BenchOptions(0.02, markdown), out);

    String text = bytes.toString(StandardCharsets.UTF_8);
    assertThat(text)
        .contains(
            "cpus (nproc):",
            "kernel:",
            "bwrap:",
            "floor 1: bare bwrap /bin/true",
            "floor 2: fork+exec /bin/true",
            "cold: new session + exec true (HTTP)",
            "cold, LangBot's shape (pooled)",
            "cold, pool_size 0",
            "cold, LangBot's shape, pool_size 0",
            "warm: exec true in a session (HTTP)",
            "warm, exec_agent false (nsenter)",
            "concurrent: 50 clients x 1 execs (HTTP)",
            "throughput at 50-way concurrency:",
            "relay round trip (ms)",
            "floor 3: a line through a plain cat child",
            "relay: text frame -> cat in a session -> text frame",
            "the relay's own cost at p50",
            "floor 4: head -c N /dev/zero, 64 KiB pipe reads",
            "raw: head -c N /dev/zero, binary frames",
            "line (info): yes | head -c N, a text frame per line",
            "memory, 20 idle sessions",
            "server JVM heap growth",
            "sandbox processes Pss",
            "cold p50 / floor 1 p50",
            "cold, LangBot's shape p50 / floor 1 p50",
            "cold p50 / floor 1 p50 (moonshot)",
            "warm p50 / floor 2 p50",
            "warm p50 / floor 2 p50 (moonshot)",
            "throughput at 50-way concurrency (execs/s)",
            "p99 / p50 at 50-way concurrency",
            "relay round trip p50 (ms)",
            "relay throughput, raw mode (MB/s)",
            "memory per idle session (MiB)");
    assertThat(text.lines().filter(l -> l.matches(".*\\b(PASS|MISS)\\b.*"))).hasSize(10);
    assertThat(report.floorBwrap().count()).isEqualTo(4);
    assertThat(report.cold().count()).isEqualTo(2);
    assertThat(report.coldLangBot().count()).isEqualTo(2);
    assertThat(report.coldUnpooled().count()).isEqualTo(2);
    assertThat(report.coldLangBotUnpooled().count()).isEqualTo(2);
    assertThat(report.warm().count()).isEqualTo(6);
    assertThat(report.warmNsenter().count()).isEqualTo(6);
    assertThat(report.concurrent().latencies().count()).isEqualTo(50);
    assertThat(report.relay().floor().count()).isEqualTo(40);
    assertThat(report.relay().roundTrip().count()).isEqualTo(40);
    assertThat(report.relay().floorRaw().bytes()).isEqualTo(5L * 1024 * 1024);
    assertThat(report.relay().raw().bytes()).isEqualTo(5L * 1024 * 1024);
    assertThat(report.relay().lines().bytes()).isEqualTo(41L * 1024);
    assertThat(report.relay().lines().messages()).as("one frame per 2-byte line").isEqualTo(20992);
    assertThat(Files.readString(markdown))
        .contains(
            "| floor 1: bare bwrap /bin/true |",
            "## Relay",
            "| raw: head -c N /dev/zero, binary frames |",
            "## Targets",
            "| cold p50 / floor 1 p50 |",
            "| relay throughput, raw mode (MB/s) |");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(ProcessHandle.current().descendants()).isEmpty());
  }
}
