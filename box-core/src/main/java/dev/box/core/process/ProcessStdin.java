package dev.box.core.process;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The stdin of a process that several callers write to: each write is whole and flushed, and once
 * it is {@linkplain #close closed} nothing more is written. Thread-safe.
 */
public final class ProcessStdin {
  private final OutputStream in;
  private boolean closed;

  /** Writes to {@code in}, the process's stdin. */
  public ProcessStdin(OutputStream in) {
    this.in = in;
  }

  /**
   * Writes {@code bytes} and flushes them.
   *
   * @return false, writing nothing, when stdin was closed
   * @throws IOException when the process does not read its stdin any more
   */
  public synchronized boolean write(byte[] bytes) throws IOException {
    if (closed) {
      return false;
    }
    in.write(bytes);
    in.flush();
    return true;
  }

  /** Closes it: the process reads end-of-file. */
  public synchronized void close() {
    closed = true;
    try {
      in.close();
    } catch (IOException e) {
      // Already gone.
    }
  }
}
