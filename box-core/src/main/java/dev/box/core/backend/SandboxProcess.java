package dev.box.core.backend;

import dev.box.api.BoxValidationException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * A process running inside a sandbox, with its three standard streams.
 *
 * <p>Each stream is read by one thread at a time. {@link #killTree} and {@link #release} may be
 * called from any thread.
 */
public interface SandboxProcess {

  /** The process's stdin; closed already when the spec did not ask for it. */
  OutputStream stdin();

  /** The process's stdout; ends when every process that holds it has closed it. */
  InputStream stdout();

  /** The process's stderr; ends when every process that holds it has closed it. */
  InputStream stderr();

  /**
   * Waits for the process (not its descendants) to exit.
   *
   * @return the exit code (128+N when killed by signal N), or empty when {@code timeout} passed
   */
  OptionalInt waitFor(Duration timeout) throws InterruptedException;

  /** Completes with the exit code (128+N when killed by signal N) when the process exits. */
  java.util.concurrent.CompletableFuture<Integer> onExit();

  /**
   * Sends SIGTERM to the process and everything it started, so they can exit cleanly; {@link
   * #killTree} is the forceful follow-up.
   */
  void terminateTree();

  /**
   * Kills the process and everything it started, including descendants that double-forked or called
   * setsid, and returns once they are gone or the backend cannot tell.
   */
  void killTree();

  /**
   * Releases the backend's bookkeeping for this process once it has exited; descendants that still
   * run are kept until the sandbox is destroyed.
   */
  void release();

  /**
   * Sets the size of the process's terminal; the kernel tells its foreground processes (SIGWINCH).
   *
   * @throws BoxValidationException when the process runs on no terminal (the default)
   */
  default void resize(ProcessSpec.Terminal size) {
    throw new BoxValidationException("this process runs on no terminal: it cannot be resized");
  }

  /**
   * What another server of the tenant gives {@link Sandbox#reattach} to take this process over, or
   * null when the process cannot outlive this server's relay of its stdio (every backend but those
   * of {@link SharedSessions}).
   */
  default @Nullable String handle() {
    return null;
  }

  /**
   * Lets go of a process that has a {@link #handle}, leaving it running: this server's side of its
   * stdio closes, its stdin stays open for the server that reattaches, and its exit is no longer
   * reported here.
   *
   * @throws UnsupportedOperationException when it has no handle
   */
  default void detach() {
    throw new UnsupportedOperationException("this process ends with the server relaying it");
  }

  /**
   * The offset in the process's whole stdout of the first byte {@link #stdout} reads: 0 for a
   * process this server started; for one it reattached, how much an earlier server was sent.
   */
  default long stdoutOffset() {
    return 0;
  }
}
