package dev.box.agenthost;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The most recent errors, for status pages: a bounded ring that forgets the oldest entry when a new
 * one arrives at capacity (the reference keeps 50). Thread-safe.
 */
public final class ErrorRing {
  /** The reference's capacity. */
  public static final int DEFAULT_CAPACITY = 50;

  /**
   * One recorded error.
   *
   * @param at when it was recorded
   * @param type the exception's simple class name, or a short kind such as {@code heartbeat}
   * @param message what went wrong
   * @param sessionId the session it concerns, or null
   */
  public record Entry(Instant at, String type, String message, @Nullable String sessionId) {}

  private final int capacity;
  private final Clock clock;
  private final ArrayDeque<Entry> entries;
  private long total;

  /**
   * A ring of {@code capacity} entries stamped by {@code clock}.
   *
   * @throws IllegalArgumentException when {@code capacity} is not positive
   */
  public ErrorRing(int capacity, Clock clock) {
    if (capacity < 1) {
      throw new IllegalArgumentException("the error ring's capacity must be positive");
    }
    this.capacity = capacity;
    this.clock = clock;
    this.entries = new ArrayDeque<>(capacity);
  }

  /** Records an error of kind {@code type}. */
  public synchronized void record(String type, String message, @Nullable String sessionId) {
    if (entries.size() == capacity) {
      entries.removeFirst();
    }
    entries.addLast(new Entry(clock.instant(), type, message, sessionId));
    total++;
  }

  /** Records {@code failure} under its class's simple name. */
  public void record(Throwable failure, @Nullable String sessionId) {
    record(failure.getClass().getSimpleName(), String.valueOf(failure.getMessage()), sessionId);
  }

  /** The errors held, oldest first; at most the capacity. */
  public synchronized List<Entry> recent() {
    return List.copyOf(entries);
  }

  /** How many errors are held now. */
  public synchronized int size() {
    return entries.size();
  }

  /** How many errors were ever recorded, forgotten ones included. */
  public synchronized long total() {
    return total;
  }
}
