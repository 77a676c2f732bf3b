package dev.box.core.time;

import dev.box.api.time.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Ticker} that moves only when told: by {@link #advance}, or by a fixed step on every
 * reading ({@link #autoAdvance}), which lets a wait loop see its deadline pass without sleeping.
 */
public final class FakeTicker implements Ticker {
  private final AtomicLong nanos = new AtomicLong();
  private volatile long step;

  @Override
  public long read() {
    return nanos.getAndAdd(step);
  }

  /** Moves the time forward by {@code duration}. */
  public FakeTicker advance(Duration duration) {
    nanos.addAndGet(duration.toNanos());
    return this;
  }

  /** Moves the time forward by {@code step} after every reading from now on. */
  public FakeTicker autoAdvance(Duration step) {
    this.step = step.toNanos();
    return this;
  }
}
