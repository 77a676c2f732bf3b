package dev.box.bench;

import java.io.IOException;

/** Times an action a number of times after discarding a warm-up. */
final class Sampler {
  private Sampler() {}

  /** One iteration of a measurement. */
  @FunctionalInterface
  interface Action {
    void run(int iteration) throws IOException, InterruptedException;
  }

  /** Runs {@code timed} {@code warmup + count} times and returns the last {@code count}. */
  static Latencies measure(int warmup, int count, Action timed)
      throws IOException, InterruptedException {
    return measure(warmup, count, timed, iteration -> {});
  }

  /**
   * Runs {@code timed} then {@code untimed} {@code warmup + count} times, and returns the latencies
   * of the last {@code count} runs of {@code timed}. Warm-up iterations are numbered from {@code
   * -warmup}, timed ones from 0.
   */
  static Latencies measure(int warmup, int count, Action timed, Action untimed)
      throws IOException, InterruptedException {
    long[] nanos = new long[count];
    for (int i = -warmup; i < count; i++) {
      long start = System.nanoTime();
      timed.run(i);
      long elapsed = System.nanoTime() - start;
      untimed.run(i);
      if (i >= 0) {
        nanos[i] = elapsed;
      }
    }
    return Latencies.ofNanos(nanos);
  }
}
