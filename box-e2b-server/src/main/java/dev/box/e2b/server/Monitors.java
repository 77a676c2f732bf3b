package dev.box.e2b.server;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** The timed waits of the classes here that wait on their own monitor. */
final class Monitors {
  private Monitors() {}

  /**
   * Waits on {@code monitor}, whose lock the caller holds, until {@code ready} or {@code
   * timeoutNanos} passed.
   *
   * @return whether it is ready
   */
  static boolean await(Object monitor, BooleanSupplier ready, long timeoutNanos)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (!ready.getAsBoolean()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(monitor, left);
    }
    return true;
  }
}
