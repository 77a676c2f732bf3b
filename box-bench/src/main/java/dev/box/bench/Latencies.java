package dev.box.bench;

import java.util.Arrays;

/**
 * The distribution of one measurement, in milliseconds.
 *
 * @param count how many samples
 * @param p50 the median
 * @param p95 the 95th percentile
 * @param p99 the 99th percentile
 */
record Latencies(int count, double p50, double p95, double p99) {

  /** The percentiles (nearest rank) of {@code nanos}, which is not modified. */
  static Latencies ofNanos(long[] nanos) {
    if (nanos.length == 0) {
      throw new IllegalArgumentException("no samples");
    }
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return new Latencies(
        sorted.length, percentile(sorted, 50), percentile(sorted, 95), percentile(sorted, 99));
  }

  private static double percentile(long[] sorted, double p) {
    int rank = (int) Math.ceil(p / 100 * sorted.length);
    return sorted[Math.max(0, rank - 1)] / 1e6;
  }
}
