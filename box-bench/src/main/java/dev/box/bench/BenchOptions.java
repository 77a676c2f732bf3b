package dev.box.bench;

import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What one benchmark run measures and how often: the default iteration counts times {@code scale}.
 *
 * @param scale the factor applied to every iteration count (1 = the full run, 0.2 = --quick)
 * @param markdown where to write the results as Markdown, or null
 */
record BenchOptions(double scale, @Nullable Path markdown) {
  /** The scale of {@code --quick}: about a fifth of the full run, for a smoke run. */
  static final double QUICK_SCALE = 0.2;

  /** Clients and sessions of the concurrency measurement; not scaled, it is the point. */
  static final int CONCURRENT_CLIENTS = 50;

  /**
   * Round trips discarded before each round-trip measurement; not scaled: the server, the JDK's
   * WebSocket and the JIT need them whatever the scale.
   */
  static final int ROUND_TRIP_WARMUP = 500;

  private static final long KIB = 1024;
  private static final long MIB = 1024 * KIB;

  static final String USAGE =
      """
      usage: BoxBench [--quick] [--iterations-scale X] [--markdown FILE]
        --quick               about a fifth of the iterations (a smoke run)
        --iterations-scale X  multiply every iteration count by X (0 < X <= 10)
        --markdown FILE       also write the results as Markdown to FILE""";

  BenchOptions {
    if (!(scale > 0 && scale <= 10)) {
      throw new IllegalArgumentException("--iterations-scale must be > 0 and <= 10, not " + scale);
    }
  }

  /** The full run. */
  static BenchOptions defaults() {
    return new BenchOptions(1.0, null);
  }

  /**
   * Parses the command line.
   *
   * @throws IllegalArgumentException with a message for the user when an argument is invalid
   */
  static BenchOptions parse(List<String> args) {
    double scale = 1.0;
    Path markdown = null;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      switch (arg) {
        case "--quick" -> scale = QUICK_SCALE;
        case "--iterations-scale" -> scale = parseScale(value(args, ++i, arg));
        case "--markdown" -> markdown = Path.of(value(args, ++i, arg));
        default -> throw new IllegalArgumentException("unknown argument '" + arg + "'");
      }
    }
    return new BenchOptions(scale, markdown);
  }

  private static String value(List<String> args, int index, String option) {
    if (index >= args.size()) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args.get(index);
  }

  private static double parseScale(String raw) {
    try {
      return Double.parseDouble(raw);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--iterations-scale must be a number, not '" + raw + "'");
    }
  }

  /** Iterations discarded before each measurement. */
  int warmupIterations() {
    return Math.max(2, scaled(20));
  }

  /** Spawns timed for each floor. */
  int floorIterations() {
    return scaled(200);
  }

  /** Sessions created, used once and deleted. */
  int coldIterations() {
    return scaled(100);
  }

  /** Execs timed in one existing session. */
  int warmIterations() {
    return scaled(300);
  }

  /** Execs timed by each of the {@link #CONCURRENT_CLIENTS} clients. */
  int execsPerClient() {
    return scaled(20);
  }

  /** Line round trips timed through the relay, and through a plain {@code cat} child. */
  int relayRoundTrips() {
    return scaled(2000);
  }

  /** Bytes streamed through the relay in raw mode: 256 MiB in the full run, at least 4 MiB. */
  long relayRawBytes() {
    return Math.max(4, scaled(256)) * MIB;
  }

  /**
   * Bytes streamed through the relay in line mode as 2-byte lines ({@code yes}): 2 MiB in the full
   * run. Far fewer than in raw mode: every line is a frame of its own, a few microseconds each.
   */
  long relayLineBytes() {
    return scaled(2048) * KIB;
  }

  /** Idle sessions held while memory is measured: 1,000 in the full run. */
  int memorySessions() {
    return Math.max(10, scaled(1000));
  }

  private int scaled(int iterations) {
    return Math.max(1, (int) Math.round(iterations * scale));
  }
}
