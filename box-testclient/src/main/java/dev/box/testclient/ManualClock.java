package dev.box.testclient;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A {@link Clock} in UTC that moves only when a test calls {@link #advance}, so that tests of
 * expiry and reaping control time instead of sleeping. Safe to read from any thread while one
 * thread advances it.
 */
public final class ManualClock extends Clock {
  private volatile Instant now;

  /** A clock that reads {@code start} until it is advanced. */
  public ManualClock(Instant start) {
    this.now = start;
  }

  /** Moves the clock forward by {@code step}. */
  public void advance(Duration step) {
    now = now.plus(step);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return now;
  }
}
