package dev.box.agenthost;

import java.time.Duration;

/**
 * Exponential backoff: the delay before reconnect attempt {@code n} (from 0) is {@code initial ×
 * factor^n}, at most {@code max}.
 *
 * @param initial the first delay
 * @param factor what each delay is multiplied by, at least 1
 * @param max the longest delay
 */
public record Backoff(Duration initial, double factor, Duration max) {
  /** The reference's reconnect backoff: 3 s, doubling, at most 60 s. */
  public static final Backoff RECONNECT =
      new Backoff(Duration.ofSeconds(3), 2.0, Duration.ofSeconds(60));

  /** Validates the settings. */
  public Backoff {
    if (initial.isNegative() || initial.isZero()) {
      throw new IllegalArgumentException("the initial delay must be positive, not " + initial);
    }
    if (!(factor >= 1.0) || Double.isInfinite(factor)) {
      throw new IllegalArgumentException("the backoff factor must be at least 1, not " + factor);
    }
    if (max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("the longest delay must not be shorter than the first");
    }
  }

  /** The delay before attempt {@code attempt}, counted from 0. */
  public Duration delay(int attempt) {
    double millis = initial.toMillis() * Math.pow(factor, Math.max(0, attempt));
    return millis >= max.toMillis() ? max : Duration.ofMillis((long) millis);
  }
}
