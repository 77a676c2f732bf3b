package dev.box.backend.docker;

import dev.box.api.time.Ticker;
import dev.box.core.backend.BackendStatus;
import java.time.Duration;

/**
 * Keeps the answer of an {@link EngineCheck} as the backend's status. An unavailable engine is
 * asked again at most every few seconds, so a daemon started later is found without a restart.
 */
final class EngineProbe {
  private static final Duration REPROBE_INTERVAL = Duration.ofSeconds(5);

  private final EngineCheck check;
  private final Ticker ticker;
  private volatile BackendStatus status;
  private volatile long probedAt;

  /**
   * Probes the engine once.
   *
   * @param check what is asked
   * @param ticker the time an answer's age is read from
   */
  EngineProbe(EngineCheck check, Ticker ticker) {
    this.check = check;
    this.ticker = ticker;
    this.status = check.probe();
    this.probedAt = ticker.read();
  }

  /** The last answer, asked again when it was unavailable and is a few seconds old. */
  BackendStatus status() {
    BackendStatus current = status;
    if (!current.available() && ticker.read() - probedAt > REPROBE_INTERVAL.toNanos()) {
      current = refresh();
    }
    return current;
  }

  /** Asks the engine now and keeps the answer. */
  BackendStatus refresh() {
    BackendStatus now = check.probe();
    status = now;
    probedAt = ticker.read();
    return now;
  }
}
