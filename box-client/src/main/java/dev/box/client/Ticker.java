package dev.box.client;

/**
 * A monotonic source of nanoseconds: {@link System#nanoTime()}, or a fake that tests advance. Only
 * differences between readings mean anything.
 */
@FunctionalInterface
public interface Ticker {
  /** Nanoseconds since an arbitrary, fixed origin. */
  long read();

  /** {@link System#nanoTime()}. */
  static Ticker system() {
    return System::nanoTime;
  }
}
