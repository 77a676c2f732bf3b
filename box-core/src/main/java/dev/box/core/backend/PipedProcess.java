package dev.box.core.backend;

import java.io.InputStream;
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
}
