package dev.box.core.backend;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.OptionalInt;

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
}
