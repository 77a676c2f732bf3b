package dev.box.core.process;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.time.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * A bounded buffer of a process's stdout, addressed by absolute byte offsets.
 *
 * <p>It keeps the bytes in {@code [start, end)}. Bytes below the delivered offset may be dropped to
 * make room (they can still be replayed until then); bytes not yet delivered never are: when the
 * buffer is full of them, {@link #write} blocks, the pump stops reading, and the process blocks on
 * its own write. Nothing is ever dropped silently.
 *
 * <p>Thread-safe: one producer, any number of readers (the relay allows one attachment at a time).
 */
public final class StdoutBuffer {
  private final byte[] ring;
  private final Ticker ticker;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private long start;
  private long end;
  private long delivered;
  private boolean eof;

  /**
   * A buffer of {@code capacity} bytes.
   *
   * @param ticker measures how long a {@link #read} has waited
   */
  public StdoutBuffer(int capacity, Ticker ticker) {
    this(capacity, 0, ticker);
  }

  /**
   * A buffer of {@code capacity} bytes whose first byte is at offset {@code base}: the stream's
   * bytes before it are gone (another server read them).
   *
   * @param ticker measures how long a {@link #read} has waited
   */
  public StdoutBuffer(int capacity, long base, Ticker ticker) {
    if (capacity < 1 || base < 0) {
      throw new IllegalArgumentException("capacity must be positive, base not negative");
    }
    this.ring = new byte[capacity];
    this.ticker = ticker;
    this.start = base;
    this.end = base;
    this.delivered = base;
  }

  /** The capacity in bytes. */
  public int capacity() {
    return ring.length;
  }

  /** Appends bytes, waiting while the buffer is full of undelivered bytes. */
  public void write(byte[] bytes, int offset, int length) throws InterruptedException {
    int done = 0;
    lock.lock();
    try {
      while (done < length) {
        while (end - delivered >= ring.length) {
          changed.await();
        }
        int want = length - done;
        int free = ring.length - (int) (end - start);
        if (free < want) {
          // Make room by forgetting delivered bytes, oldest first, only as many as needed.
          long drop = Math.min(want - free, delivered - start);
          start += drop;
          free += (int) drop;
        }
        int n = Math.min(free, length - done);
        copyIn(bytes, offset + done, n);
        end += n;
        done += n;
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  private void copyIn(byte[] bytes, int offset, int n) {
    int at = (int) (end % ring.length);
    int first = Math.min(n, ring.length - at);
    System.arraycopy(bytes, offset, ring, at, first);
    System.arraycopy(bytes, offset + first, ring, 0, n - first);
  }

  /** Marks the end of the stream: readers see it once they reach {@link #end()}. */
  public void close() {
    changeAndSignal(() -> eof = true);
  }

  /**
   * Reads bytes from offset {@code from}, waiting up to {@code timeout} for some to arrive.
   *
   * @return the bytes (empty when the timeout passed, or at the end of the stream: see {@link
   *     #isEndOfStream})
   * @throws OffsetGoneException when {@code from} is older than the oldest byte kept
   */
  public byte[] read(long from, int max, Duration timeout) throws InterruptedException {
    long deadline = ticker.read() + timeout.toNanos();
    lock.lock();
    try {
      if (from < start) {
        throw new OffsetGoneException(from, start);
      }
      while (from >= end && !eof) {
        long left = deadline - ticker.read();
        if (left <= 0) {
          return new byte[0];
        }
        changed.await(left, TimeUnit.NANOSECONDS);
        if (from < start) {
          throw new OffsetGoneException(from, start);
        }
      }
      int n = (int) Math.min(max, Math.max(0, end - from));
      byte[] out = new byte[n];
      int at = (int) (from % ring.length);
      int first = Math.min(n, ring.length - at);
      System.arraycopy(ring, at, out, 0, first);
      System.arraycopy(ring, 0, out, first, n - first);
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** Whether {@code offset} is the end of a closed stream. */
  public boolean isEndOfStream(long offset) {
    lock.lock();
    try {
      return eof && offset >= end;
    } finally {
      lock.unlock();
    }
  }

  /** Records that a client received everything below {@code offset}; frees room for the pump. */
  public void markDelivered(long offset) {
    changeAndSignal(() -> delivered = Math.max(start, Math.min(offset, end)));
  }

  /** The offset of the oldest byte still kept. */
  public long start() {
    return locked(() -> start);
  }

  /** The offset after the newest byte: how many bytes the process wrote so far. */
  public long end() {
    return locked(() -> end);
  }

  /** The offset up to which clients received the stream; the next attachment starts here. */
  public long delivered() {
    return locked(() -> delivered);
  }

  /** Reads an offset under the lock, so that it is never one a writer is half-way through. */
  private long locked(LongSupplier offset) {
    lock.lock();
    try {
      return offset.getAsLong();
    } finally {
      lock.unlock();
    }
  }

  /** Changes the state under the lock, then wakes every waiting writer and reader to look again. */
  private void changeAndSignal(Runnable change) {
    lock.lock();
    try {
      change.run();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** A read asked for bytes that were already dropped after their delivery. */
  public static final class OffsetGoneException extends BoxException {
    private static final long serialVersionUID = 1L;
    private final long firstAvailable;

    OffsetGoneException(long requested, long firstAvailable) {
      super(
          BoxErrorCode.OFFSET_GONE,
          "offset "
              + requested
              + " is no longer buffered; the first available is "
              + firstAvailable);
      this.firstAvailable = firstAvailable;
    }

    /** The oldest offset that can still be read. */
    public long firstAvailable() {
      return firstAvailable;
    }
  }
}
