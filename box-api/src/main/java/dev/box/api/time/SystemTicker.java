package dev.box.api.time;

/** {@link System#nanoTime()} as a {@link Ticker}. */
enum SystemTicker implements Ticker {
  INSTANCE;

  @Override
  public long read() {
    return System.nanoTime();
  }
}
