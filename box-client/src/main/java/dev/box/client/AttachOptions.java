package dev.box.client;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * How {@link BoxClient#attach} delivers a process's stdout and survives dropped connections.
 *
 * <p>Start from {@link #defaults()} and change what you need with the {@code with} methods.
 *
 * @param delivery whether the listener receives {@linkplain ProcessListener#onStdoutLine lines} or
 *     {@linkplain ProcessListener#onStdout bytes with offsets}
 * @param from the stdout byte offset to start at, or null to start where the previous attachment's
 *     delivery ended (nothing twice, nothing skipped)
 * @param reconnectAttempts how many times to try to reconnect after a connection dropped, waiting
 *     100 ms before the first try and twice as long before each next one (at most 2 s); 0 ends the
 *     attachment with {@link ProcessListener#onFailure} at the first drop
 * @param idleTimeout how long a connection may stay silent before it counts as dropped; the server
 *     pings every 30 s, so a silent connection is a dead one. {@link Duration#ZERO} waits forever
 * @param maxLineBytes the longest stdout line delivered in {@link Delivery#LINES} mode; a longer
 *     one ends the attachment with {@link ProcessListener#onFailure}
 */
public record AttachOptions(
    Delivery delivery,
    @Nullable Long from,
    int reconnectAttempts,
    Duration idleTimeout,
    int maxLineBytes) {

  /** The default number of reconnect attempts. */
  public static final int DEFAULT_RECONNECT_ATTEMPTS = 5;

  /** The default idle timeout: two missed server pings and a margin. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(75);

  /** The default longest line: 16 MiB. */
  public static final int DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

  /** What the listener receives. */
  public enum Delivery {
    /** Complete lines, decoded as UTF-8, through {@link ProcessListener#onStdoutLine}. */
    LINES,
    /** Bytes as written, with their offsets, through {@link ProcessListener#onStdout}. */
    BYTES
  }

  /** Validates every field, with the message a caller sees. */
  public AttachOptions {
    if (from != null && from < 0) {
      throw new IllegalArgumentException("from must be a byte offset (0 or more), not " + from);
    }
    if (reconnectAttempts < 0) {
      throw new IllegalArgumentException(
          "reconnectAttempts must be 0 or more, not " + reconnectAttempts);
    }
    if (idleTimeout.isNegative()) {
      throw new IllegalArgumentException("idleTimeout must not be negative, not " + idleTimeout);
    }
    if (maxLineBytes < 1) {
      throw new IllegalArgumentException("maxLineBytes must be positive, not " + maxLineBytes);
    }
  }

  /**
   * Lines, from where the previous delivery ended, {@value #DEFAULT_RECONNECT_ATTEMPTS} reconnect
   * attempts, a 75 s idle timeout and lines up to 16 MiB.
   */
  public static AttachOptions defaults() {
    return new AttachOptions(
        Delivery.LINES,
        null,
        DEFAULT_RECONNECT_ATTEMPTS,
        DEFAULT_IDLE_TIMEOUT,
        DEFAULT_MAX_LINE_BYTES);
  }

  /** A copy delivering {@code value}. */
  public AttachOptions withDelivery(Delivery value) {
    return new AttachOptions(value, from, reconnectAttempts, idleTimeout, maxLineBytes);
  }

  /** A copy starting at the stdout byte offset {@code offset}. */
  public AttachOptions withFrom(long offset) {
    return new AttachOptions(delivery, offset, reconnectAttempts, idleTimeout, maxLineBytes);
  }

  /** A copy trying {@code attempts} times to reconnect after a drop; 0 disables reconnecting. */
  public AttachOptions withReconnectAttempts(int attempts) {
    return new AttachOptions(delivery, from, attempts, idleTimeout, maxLineBytes);
  }

  /** A copy treating a connection silent for {@code timeout} as dropped; zero never does. */
  public AttachOptions withIdleTimeout(Duration timeout) {
    return new AttachOptions(delivery, from, reconnectAttempts, timeout, maxLineBytes);
  }

  /** A copy delivering lines up to {@code bytes} long. */
  public AttachOptions withMaxLineBytes(int bytes) {
    return new AttachOptions(delivery, from, reconnectAttempts, idleTimeout, bytes);
  }
}
