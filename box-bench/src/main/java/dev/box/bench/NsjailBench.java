package dev.box.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The nsjail backend measured against a bare {@code nsjail -Mo} of {@code /bin/true} in the same
 * run (every namespace, the host's root read-only, an unprivileged uid), with the bubblewrap
 * backend beside it: a new session with one {@code true} exec (cold) and a {@code true} exec in an
 * existing session (warm), both over HTTP through the real server. It is a measurement, not a test.
 *
 * <p>Usage: {@code BoxBench --nsjail [N]} (iterations, default 50); needs root and nsjail.
 */
final class NsjailBench {
  private static final int WARMUP = 5;

  private NsjailBench() {}

  /** One backend's cold and warm execs. */
  private record Execs(String backend, Latencies cold, Latencies warm) {}

  /** Cold execs on a second nsjail server with {@code pool_size 0}, in the same run. */
  private static Latencies coldUnpooled(int iterations, PrintStream out)
      throws IOException, InterruptedException {
    try (LocalBox box = LocalBox.start(100, Map.of("backend", "nsjail", "pool_size", "0"))) {
      progress(out, "nsjail, pool_size 0: " + iterations + " cold: new session + exec true");
      return box.client().coldExecs(WARMUP, iterations);
    }
  }

  /** Runs and prints; returns the exit status. */
  static int main(List<String> args, PrintStream out) throws IOException, InterruptedException {
    int iterations = args.isEmpty() ? 50 : Integer.parseInt(args.get(0));
    Execs nsjail = execs("nsjail", iterations, out);
    Latencies nsjailUnpooled = coldUnpooled(iterations, out);
    String binary =
        nsjail.backend().startsWith("nsjail ") ? nsjail.backend().substring(7) : "nsjail";
    List<String> bare =
        List.of(
            binary,
            "-Mo",
            "--chroot",
            "/",
            "--user",
            "99999",
            "--group",
            "99999",
            "--really_quiet",
            "--",
            "/bin/true");
    progress(out, iterations + " bare nsjail -Mo /bin/true");
    Latencies floor = Sampler.measure(WARMUP, iterations, i -> ProcessFloors.run(bare));
    Execs bwrap = execs("bwrap", iterations, out);
    Table table = new Table("measure", "p50 ms", "p95 ms", "p99 ms", "ratio p50");
    row(table, "floor: bare nsjail -Mo /bin/true", floor, null);
    row(table, "nsjail cold: new session + exec true (HTTP)", nsjail.cold(), floor);
    row(table, "nsjail cold, pool_size 0 (HTTP)", nsjailUnpooled, floor);
    row(table, "nsjail warm: exec true in a session (HTTP)", nsjail.warm(), floor);
    row(table, "bwrap cold, same run (HTTP)", bwrap.cold(), floor);
    row(table, "bwrap warm, same run (HTTP)", bwrap.warm(), floor);
    out.println();
    out.println(
        nsjail.backend() + ", " + iterations + " iterations each after " + WARMUP + " warm-up\n");
    out.print(table.markdown());
    return 0;
  }

  /** Cold and warm execs of {@code true} on {@code backend}, through a server of its own. */
  private static Execs execs(String backend, int iterations, PrintStream out)
      throws IOException, InterruptedException {
    try (LocalBox box = LocalBox.start(100, Map.of("backend", backend))) {
      BenchClient client = box.client();
      String reason = client.status().path("backend").path("reason").asText();
      progress(out, backend + ": " + iterations + " cold: new session + exec true");
      Latencies cold = client.coldExecs(WARMUP, iterations);
      progress(out, backend + ": " + iterations + " warm: exec true in a session");
      Latencies warm = client.warmExecs(WARMUP, iterations);
      return new Execs(reason, cold, warm);
    }
  }

  private static void row(Table table, String name, Latencies l, @Nullable Latencies floor) {
    String ratio = floor == null ? "" : format(l.p50() / floor.p50()) + "x";
    table.row(name, format(l.p50()), format(l.p95()), format(l.p99()), ratio);
  }

  private static String format(double value) {
    return String.format(Locale.ROOT, "%.2f", value);
  }

  private static void progress(PrintStream out, String what) {
    out.println("running " + what + " ...");
    out.flush();
  }
}
