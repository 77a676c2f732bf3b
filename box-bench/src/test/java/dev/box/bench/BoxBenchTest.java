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
            "warm: exec true in a session (HTTP)",
            "concurrent: 50 clients x 1 execs (HTTP)",
            "throughput at 50-way concurrency:",
            "memory, 10 idle sessions",
            "server JVM heap growth",
            "sandbox processes Pss",
            "cold p50 / floor 1 p50",
            "warm p50 / floor 1 p50",
            "warm p50 / floor 2 p50",
            "p99 / p50 at 50-way concurrency",
            "memory per idle session (MiB)");
    assertThat(text.lines().filter(l -> l.matches(".*\\b(PASS|MISS)\\b.*"))).hasSize(5);
    assertThat(report.floorBwrap().count()).isEqualTo(4);
    assertThat(report.cold().count()).isEqualTo(2);
    assertThat(report.warm().count()).isEqualTo(6);
    assertThat(report.concurrent().latencies().count()).isEqualTo(50);
    assertThat(Files.readString(markdown))
        .contains("| floor 1: bare bwrap /bin/true |", "## Targets", "| cold p50 / floor 1 p50 |");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(ProcessHandle.current().descendants()).isEmpty());
  }
}
