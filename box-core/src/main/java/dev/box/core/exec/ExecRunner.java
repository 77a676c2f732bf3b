package dev.box.core.exec;

import dev.box.api.BoxExecutionStatus;
import dev.box.api.time.Ticker;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one command in a sandbox under a hard wall-clock timeout, capturing bounded output.
 *
 * <p>This is where an exec times out: when {@code timeout} passes, the whole process tree the exec
 * started is killed through {@link SandboxProcess#killTree()} and the result says {@code
 * timed_out}. The sandbox itself survives. Output is read by one pump thread per stream while the
 * command runs; when the command exits while a background process it started still holds a stream,
 * the stream is drained and dropped (never closed under the writer) after a short grace.
 *
 * <p>Elapsed time and the drain deadline are read from a {@link Ticker}. The pumps run on an
 * executor the caller gives and shuts down (the server's, see {@link #newPumpPool()}).
 */
public final class ExecRunner {
  private static final Logger log = LoggerFactory.getLogger(ExecRunner.class);

  /** How long to wait for the last output after the command exited (pipes hold a little). */
  private static final Duration DRAIN_GRACE = Duration.ofMillis(200);

  /** How long a killed tree may take to disappear before the exec answers anyway. */
  private static final Duration KILL_WAIT = Duration.ofSeconds(2);

  /**
   * Each pump thread's read buffer, kept for its next stream: a new one per stream was most of what
   * an exec allocated (two of 64 KiB, zeroed, for a command that writes nothing). A pump thread
   * reads one stream at a time, and the bytes read are copied before the next read.
   */
  private static final ThreadLocal<byte[]> BUFFERS =
      ThreadLocal.withInitial(() -> new byte[64 * 1024]);

  private final int maxOutputBytes;
  private final Ticker ticker;
  private final Executor pumps;

  /**
   * Creates a runner on the caller's pump threads, which the caller shuts down.
   *
   * @param maxOutputBytes bytes kept per stream (head and tail)
   * @param ticker measures the duration of an exec and the grace for its last output
   * @param pumps runs one blocking read loop per stream of every exec: give it platform threads
   *     (see {@link #newPumpPool()}), and no bound below two per concurrent exec
   */
  public ExecRunner(int maxOutputBytes, Ticker ticker, Executor pumps) {
    this.maxOutputBytes = maxOutputBytes;
    this.ticker = ticker;
    this.pumps = pumps;
  }

  /**
   * A pool for the pumps: daemon platform threads named {@code box-exec-pump}, created on demand
   * and ended after a minute unused. Platform threads, because a blocking read of a pipe pins a
   * virtual thread's carrier, and pinned carriers would delay the timers that enforce timeouts.
   */
  public static ExecutorService newPumpPool() {
    return Executors.newCachedThreadPool(
        r -> {
          Thread t = new Thread(r, "box-exec-pump");
          t.setDaemon(true);
          return t;
        });
  }

  /**
   * Runs {@code spec} in {@code sandbox}; see the class comment. The process is released however
   * the run ends.
   *
   * @throws InterruptedException when the calling thread is interrupted; while the command still
   *     runs, its tree is killed first
   */
  public ExecOutcome run(Sandbox sandbox, ProcessSpec spec, Duration timeout)
      throws InterruptedException {
    return run(sandbox, spec, timeout, ExecListener.NONE);
  }

  /**
   * Runs {@code spec} in {@code sandbox} as {@link #run(Sandbox, ProcessSpec, Duration)} does, and
   * has {@code listener} hear its output as it comes: up to the output limit of each stream, then
   * the timeout's note on stderr when it struck. A listener that is gone ends the command.
   */
  public ExecOutcome run(Sandbox sandbox, ProcessSpec spec, Duration timeout, ExecListener listener)
      throws InterruptedException {
    long started = ticker.read();
    SandboxProcess process = sandbox.spawn(spec);
    try {
      listener.started(process::killTree);
      return await(process, timeout, started, listener);
    } finally {
      process.release();
    }
  }

  /** Waits for the process and its output; an interrupt kills the tree before it is rethrown. */
  private ExecOutcome await(
      SandboxProcess process, Duration timeout, long started, ExecListener listener)
      throws InterruptedException {
    OutputCapture out = new OutputCapture(maxOutputBytes);
    OutputCapture err = new OutputCapture(maxOutputBytes);
    Future<?> outPump = pump(process, false, out, listener);
    Future<?> errPump = pump(process, true, err, listener);
    OptionalInt exit;
    boolean timedOut = false;
    try {
      exit = process.waitFor(timeout);
      if (exit.isEmpty()) {
        timedOut = true;
        process.killTree();
        exit = process.waitFor(KILL_WAIT);
      }
    } catch (InterruptedException e) {
      process.killTree();
      throw e;
    }
    long drainDeadline = ticker.read() + DRAIN_GRACE.toNanos();
    finishPump(outPump, out, drainDeadline);
    finishPump(errPump, err, drainDeadline);
    long durationMs = Duration.ofNanos(ticker.read() - started).toMillis();
    String stderr = err.render();
    if (timedOut) {
      if (stderr.isEmpty()) {
        stderr = "Command timed out after " + timeout.toSeconds() + " seconds.";
        listener.note(stderr);
      }
      return new ExecOutcome(
          BoxExecutionStatus.TIMED_OUT,
          null,
          out.render(),
          stderr,
          durationMs,
          out.droppedBytes(),
          err.droppedBytes());
    }
    return new ExecOutcome(
        BoxExecutionStatus.COMPLETED,
        exit.getAsInt(),
        out.render(),
        stderr,
        durationMs,
        out.droppedBytes(),
        err.droppedBytes());
  }

  private void finishPump(Future<?> pump, OutputCapture capture, long deadline)
      throws InterruptedException {
    try {
      pump.get(Math.max(0, deadline - ticker.read()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      // A background process still holds the stream: stop keeping its bytes, keep draining them.
      capture.freeze();
    } catch (ExecutionException e) {
      log.debug("output pump failed", e);
    }
  }

  /**
   * Reads one stream of {@code process} into {@code capture}, and passes it to {@code listener} up
   * to the output limit; a listener that is gone has the tree killed, and the stream is drained on.
   */
  private Future<?> pump(
      SandboxProcess process, boolean stderr, OutputCapture capture, ExecListener listener) {
    InputStream stream = stderr ? process.stderr() : process.stdout();
    return CompletableFuture.runAsync(
        () -> {
          byte[] buffer = BUFFERS.get();
          long told = listener == ExecListener.NONE ? maxOutputBytes : 0;
          try (stream) {
            int n;
            while ((n = stream.read(buffer)) >= 0) {
              capture.write(buffer, 0, n);
              int tell = (int) Math.min(n, maxOutputBytes - told);
              if (tell > 0) {
                told += tell;
                told = tellOrKill(process, listener, stderr, buffer, tell) ? told : maxOutputBytes;
              }
            }
          } catch (IOException e) {
            log.debug("output stream ended with an error", e);
          }
        },
        pumps);
  }

  /** Passes output on; when the listener is gone, kills the tree and says so. */
  private static boolean tellOrKill(
      SandboxProcess process, ExecListener listener, boolean stderr, byte[] bytes, int length) {
    try {
      listener.output(stderr, bytes, length);
      return true;
    } catch (IOException e) {
      log.debug("the listener of an exec is gone, ending it: {}", e.toString());
      process.killTree();
      return false;
    }
  }
}
