package dev.box.core.exec;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Keeps at most a fixed number of bytes of one output stream while it is read: the head, and a ring
 * buffer of the tail. Memory stays bounded whatever the stream's length.
 *
 * <p>Thread-safe: one pump thread appends while another thread may {@link #freeze} and render.
 */
public final class OutputCapture {
  private final int headLimit;
  private final int tailLimit;
  private final ByteArrayOutputStream head = new ByteArrayOutputStream();
  private byte[] tail = new byte[0];
  private int tailStart;
  private int tailLength;
  private long total;
  private boolean frozen;

  /** A capture that keeps at most {@code limit} bytes (half head, half tail). */
  public OutputCapture(int limit) {
    if (limit < 2) {
      throw new IllegalArgumentException("limit must be at least 2 bytes");
    }
    this.headLimit = limit / 2;
    this.tailLimit = limit - headLimit;
  }

  /** Appends bytes read from the stream; ignored once {@link #freeze frozen}. */
  public synchronized void write(byte[] bytes, int offset, int length) {
    if (frozen) {
      return;
    }
    total += length;
    int toHead = Math.min(length, headLimit - head.size());
    if (toHead > 0) {
      head.write(bytes, offset, toHead);
    }
    int rest = length - toHead;
    if (rest > 0) {
      appendTail(bytes, offset + toHead, rest);
    }
  }

  private void appendTail(byte[] bytes, int offset, int length) {
    if (tail.length == 0) {
      tail = new byte[tailLimit];
    }
    if (length >= tailLimit) {
      System.arraycopy(bytes, offset + length - tailLimit, tail, 0, tailLimit);
      tailStart = 0;
      tailLength = tailLimit;
      return;
    }
    int end = (tailStart + tailLength) % tailLimit;
    int first = Math.min(length, tailLimit - end);
    System.arraycopy(bytes, offset, tail, end, first);
    System.arraycopy(bytes, offset + first, tail, 0, length - first);
    int overflow = Math.max(0, tailLength + length - tailLimit);
    tailStart = (tailStart + overflow) % tailLimit;
    tailLength = Math.min(tailLimit, tailLength + length);
  }

  /** Stops capturing: later bytes are read and dropped, so writers never block or break. */
  public synchronized void freeze() {
    frozen = true;
  }

  /** How many bytes were dropped from the middle so far. */
  public synchronized long droppedBytes() {
    return total - head.size() - tailLength;
  }

  /**
   * The kept bytes as UTF-8 (invalid sequences become U+FFFD), with one marker line where bytes
   * were dropped.
   */
  public synchronized String render() {
    byte[] kept = new byte[tailLength];
    int first = Math.min(tailLength, tailLimit - tailStart);
    if (tailLength > 0) {
      System.arraycopy(tail, tailStart, kept, 0, first);
      System.arraycopy(tail, 0, kept, first, tailLength - first);
    }
    long dropped = droppedBytes();
    if (dropped == 0) {
      // Head and tail are contiguous: decode them as one, so no character is split.
      ByteArrayOutputStream all = new ByteArrayOutputStream(head.size() + kept.length);
      all.writeBytes(head.toByteArray());
      all.writeBytes(kept);
      return all.toString(StandardCharsets.UTF_8);
    }
    String headText = head.toString(StandardCharsets.UTF_8);
    String tailText = new String(kept, StandardCharsets.UTF_8);
    return headText
        + "\n... [box: "
        + dropped
        + " bytes of output dropped here; "
        + total
        + " bytes in all] ...\n"
        + tailText;
  }
}
