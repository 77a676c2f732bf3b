package dev.box.client;

import java.time.Duration;

/** Waits between reconnect attempts: {@link Thread#sleep}, or a fake that tests record. */
@FunctionalInterface
public interface Sleeper {
  /** Returns after {@code duration}, to the millisecond. */
  void sleep(Duration duration) throws InterruptedException;

  /** {@link Thread#sleep(long)}. */
  static Sleeper system() {
    return duration -> Thread.sleep(duration.toMillis());
  }
}
