package dev.box.core.backend;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A sandbox process whose output a backend thread offers to two {@link ChunkPipe}s and whose exit
 * that thread completes: the remote backends' processes, whose streams arrive over a connection.
 */
public abstract class PipedProcess implements SandboxProcess {
  /** What the process writes to stdout, as the backend receives it. */
  protected final ChunkPipe stdout = new ChunkPipe();

  /** What the process writes to stderr, as the backend receives it. */
  protected final ChunkPipe stderr = new ChunkPipe();

  /** Completes with the exit code; {@link #onExit} hands out copies. */
  protected final CompletableFuture<Integer> exit = new CompletableFuture<>();

  private final int lostCode;

  /**
   * @param lostCode the exit code {@link #waitFor} reports when {@link #exit} fails
   */
  protected PipedProcess(int lostCode) {
    this.lostCode = lostCode;
  }

  @Override
  public OptionalInt waitFor(Duration timeout) throws InterruptedException {
    try {
      return OptionalInt.of(exit.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
    } catch (TimeoutException e) {
      return OptionalInt.empty();
    } catch (ExecutionException e) {
      return OptionalInt.of(lostCode);
    }
  }

  @Override
  public CompletableFuture<Integer> onExit() {
    return exit.copy();
  }

  @Override
  public InputStream stdout() {
    return stdout;
  }

  @Override
  public InputStream stderr() {
    return stderr;
  }

  /**
   * Ends both output streams and completes the exit with {@code code}: the last step of the thread
   * that moves the process's output, whatever stopped it.
   */
  protected final void end(int code) {
    try {
      stdout.finish();
      stderr.finish();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    exit.complete(code);
  }

  /** A stdin closed already, for a process whose spec did not ask for one. */
  protected static OutputStream closedStdin() {
    OutputStream closed = OutputStream.nullOutputStream();
    try {
      closed.close();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return closed;
  }

  /**
   * A stdin whose writes go to the backend in order, in chunks of at most 64 KiB, and whose close
   * tells the backend once, while the process runs.
   */
  protected abstract class ChunkedStdin extends OutputStream {
    private static final int CHUNK = 64 * 1024;
    private boolean closed;

    /** Sends {@code length} bytes of {@code bytes} from {@code offset}, at most 64 KiB. */
    protected abstract void sendChunk(byte[] bytes, int offset, int length) throws IOException;

    /** Tells the backend that stdin has ended. */
    protected abstract void sendEnd() throws IOException;

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
      if (closed) {
        throw new IOException("stdin is closed");
      }
      for (int at = offset; at < offset + length; at += CHUNK) {
        sendChunk(bytes, at, Math.min(offset + length - at, CHUNK));
      }
    }

    @Override
    public synchronized void close() throws IOException {
      if (!closed) {
        closed = true;
        if (!exit.isDone()) {
          sendEnd();
        }
      }
    }
  }
}
