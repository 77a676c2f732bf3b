package dev.box.client;

import dev.box.api.time.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Ticker} that moves only when told, and a {@link Sleeper} that returns at once after
 * moving it by the duration asked for and recording it.
 */
public final class FakeTime implements Ticker, Sleeper {
  private final AtomicLong nanos = new AtomicLong();
  private final List<Duration> sleeps = new CopyOnWriteArrayList<>();

  @Override
  public long read() {
    return nanos.get();
  }

  @Override
  public void sleep(Duration duration) {
    sleeps.add(duration);
    advance(duration);
  }

  /** Moves the time forward by {@code duration}. */
  public void advance(Duration duration) {
    nanos.addAndGet(duration.toNanos());
  }

  /** Every duration slept so far, in order. */
  public List<Duration> sleeps() {
    return List.copyOf(sleeps);
  }
}
