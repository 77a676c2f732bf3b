package dev.box.bench;

import dev.box.api.BoxSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The microvm backend, under the acceleration the host gives it (what {@code /v1/health} says),
 * with the bubblewrap backend beside it in the same run, all over HTTP through the real server: a
 * VM's boot (a new session and its first {@code true} on a server with {@code pool_size 0}, the
 * session's {@code pids_limit} one below the default so that its VM is not like the pool's and
 * boots), a VM's restore from the saved template (the same with the default limits: the warm-up
 * boots and saves the template), a session that takes a VM of the pool (the same, with the pool
 * refilled before each, untimed), and a {@code true} exec in an existing session. It is a
 * measurement, not a test.
 *
 * <p>Usage: {@code BoxBench --microvm [N]} (iterations, default 5, after one warm-up); needs root
 * and what {@code scripts/microvm} prepares.
 */
final class MicrovmBench {
  private static final int WARMUP = 1;

  /** A boot under TCG on a busy machine takes up to a minute. */
  private static final Duration REFILL = Duration.ofSeconds(120);

  private MicrovmBench() {}

  /** Runs and prints; returns the exit status. */
  static int main(List<String> args, PrintStream out) throws IOException, InterruptedException {
    int iterations = args.isEmpty() ? 5 : Integer.parseInt(args.get(0));
    Latencies boot;
    Latencies restore;
    String restored;
    try (LocalBox box = LocalBox.start(100, Map.of("backend", "microvm", "pool_size", "0"))) {
      BenchClient client = box.client();
      progress(out, "microvm, pool_size 0: " + iterations + " boots: new session + exec true");
      String notLikeThePool =
          "\"pids_limit\":" + (BoxSpec.builder("bench").build().pidsLimit() - 1);
      boot =
          Sampler.measure(
              WARMUP,
              iterations,
              i -> client.execTrue(BenchClient.benchId("b", i), notLikeThePool),
              i -> client.delete(BenchClient.benchId("b", i)));
      progress(out, "microvm, pool_size 0: " + iterations + " restores: new session + exec true");
      restore = client.coldExecs(WARMUP, iterations);
      restored = client.health().path("enforced").path("vm_state").asText();
    }
    Latencies pooled;
    Latencies warm;
    String isolation;
    try (LocalBox box = LocalBox.start(100, Map.of("backend", "microvm"))) {
      BenchClient client = box.client();
      isolation = client.status().path("backend").path("reason").asText();
      progress(out, "microvm, pool_size 2: " + iterations + " takes: new session + exec true");
      client.awaitPoolFull(REFILL);
      pooled =
          Sampler.measure(
              WARMUP,
              iterations,
              i -> client.execTrue(BenchClient.benchId("p", i)),
              i -> {
                client.delete(BenchClient.benchId("p", i));
                client.awaitPoolFull(REFILL);
              });
      progress(out, "microvm: " + iterations * 10 + " warm: exec true in a session");
      warm = client.warmExecs(WARMUP, iterations * 10);
    }
    Latencies bwrapCold;
    Latencies bwrapWarm;
    try (LocalBox box = LocalBox.start(100, Map.of("backend", "bwrap"))) {
      progress(out, "bwrap: " + iterations * 10 + " cold and warm");
      bwrapCold = box.client().coldExecs(WARMUP, iterations * 10);
      bwrapWarm = box.client().warmExecs(WARMUP, iterations * 10);
    }
    Table table = new Table("measure", "p50 ms", "p95 ms", "p99 ms", "ratio p50 to bwrap");
    row(table, "microvm boot: new session + exec true, no pool", boot, bwrapCold);
    row(table, "microvm restore: new session + exec true, no pool", restore, bwrapCold);
    row(table, "microvm pooled: new session + exec true", pooled, bwrapCold);
    row(table, "microvm warm: exec true in a session", warm, bwrapWarm);
    row(table, "bwrap cold, same run", bwrapCold, null);
    row(table, "bwrap warm, same run", bwrapWarm, null);
    out.println();
    out.println(
        isolation
            + "; microvm "
            + iterations
            + " iterations (warm "
            + iterations * 10
            + ") after "
            + WARMUP
            + " warm-up\n");
    out.print(table.markdown());
    out.println("\nvm_state after the restores: " + restored);
    return 0;
  }

  private static void row(Table table, String name, Latencies l, @Nullable Latencies base) {
    String ratio = base == null ? "" : format(l.p50() / base.p50()) + "x";
    table.row(name, format(l.p50()), format(l.p95()), format(l.p99()), ratio);
  }

  private static String format(double value) {
    return String.format(Locale.ROOT, "%.1f", value);
  }

  private static void progress(PrintStream out, String what) {
    out.println("running " + what + " ...");
    out.flush();
  }
}
