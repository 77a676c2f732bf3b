package dev.box.api.time;

/**
 * A monotonic source of nanoseconds, for measuring elapsed time and computing deadlines.
 *
 * <p>Only differences between two readings mean anything; a reading is not a time of day (use a
 * {@link java.time.Clock} for that). Classes that wait or time out read this instead of {@link
 * System#nanoTime()}, so tests can hand them a fake one and advance it.
 */
@FunctionalInterface
public interface Ticker {
  /** Nanoseconds since an arbitrary, fixed origin; never smaller than an earlier reading. */
  long read();

  /** The ticker of this JVM: {@link System#nanoTime()}. */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }
}
