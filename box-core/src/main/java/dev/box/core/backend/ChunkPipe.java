package dev.box.core.backend;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import org.jspecify.annotations.Nullable;

/**
 * One output stream of a process whose bytes arrive as chunks from elsewhere (a demultiplexed
 * container stream, an RPC stream): one writer offers chunks, one reader reads them. A bounded
 * queue, so a reader that falls behind slows the process down instead of filling the heap; once the
 * reader closes it, chunks are dropped so the other stream goes on.
 */
public final class ChunkPipe extends InputStream {
  private static final byte[] END = new byte[0];

  private final BlockingQueue<byte[]> chunks = new ArrayBlockingQueue<>(64);
  private byte @Nullable [] current;
  private int position;
  private volatile boolean closed;
  private boolean ended;

  /**
   * Hands a chunk to the reader, waiting while the queue is full. Closing the pipe empties the
   * queue, which frees a waiting writer; later chunks are dropped.
   */
  public void offer(byte[] chunk) throws InterruptedException {
    if (!closed && chunk.length > 0) {
      chunks.put(chunk);
    }
  }

  /** Marks the end of the stream. */
  public void finish() throws InterruptedException {
    if (!closed) {
      chunks.put(END);
    }
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] buffer, int offset, int length) throws IOException {
    if (length == 0) {
      return 0;
    }
    byte[] chunk = current;
    if (chunk == null || position >= chunk.length) {
      if (ended) {
        return -1;
      }
      try {
        chunk = chunks.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while reading an exec stream");
      }
      if (chunk == END) {
        ended = true;
        current = null;
        return -1;
      }
      current = chunk;
      position = 0;
    }
    int n = Math.min(length, chunk.length - position);
    System.arraycopy(chunk, position, buffer, offset, n);
    position += n;
    return n;
  }

  /**
   * Drops what is queued and ends the stream: a reader blocked in {@link #read} (the exec's output
   * pump, when a background process still holds the stream) wakes up to the end of the stream.
   */
  @Override
  public void close() {
    closed = true;
    chunks.clear();
    chunks.offer(END);
  }
}
