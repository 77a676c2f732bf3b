package dev.box.core.session;

import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxExecutionStatus;
import java.time.Duration;

/**
 * What a runtime reports as its sessions work: execs as they end and sandboxes as they start. The
 * server's metrics implement it; every method is a no-op by default.
 *
 * <p>The listener lives here, and not a metrics library, so that the core stays free of one: the
 * events fire wherever an exec or a start happens (the REST API and LangBot's actions alike), and
 * the composition root decides what records them. Methods are called on the thread that did the
 * work, right after it; they must be quick and must not throw.
 */
public interface SessionListener {

  /** A listener that records nothing. */
  SessionListener NONE = new SessionListener() {};

  /** How an exec ended; each has a fixed label, so a metric's label values stay bounded. */
  enum ExecEnd {
    /** The command exited 0. */
    OK("ok"),
    /** The command exited with another code. */
    NONZERO("nonzero"),
    /** The command ran past its timeout and its tree was killed. */
    TIMEOUT("timeout"),
    /**
     * No result: the session could not be started or reused (a conflicting spec, a refused mount,
     * capacity reached, a backend failure, shutdown) or the command could not be spawned.
     */
    ERROR("error");

    private final String label;

    ExecEnd(String label) {
      this.label = label;
    }

    /** The lower-case name used as a label value ({@code ok}, {@code nonzero}, ...). */
    public String label() {
      return label;
    }
  }

  /**
   * One exec as it ended.
   *
   * @param backend the name of the backend it ran on (or would have)
   * @param end how it ended
   * @param duration from the request reaching the runtime to its result or error, the start of a
   *     session the exec created included
   * @param stdoutTruncated whether bytes of stdout were dropped ({@code max_output_bytes})
   * @param stderrTruncated whether bytes of stderr were dropped
   */
  record ExecEnded(
      String backend,
      ExecEnd end,
      Duration duration,
      boolean stdoutTruncated,
      boolean stderrTruncated) {

    /** The exec that produced {@code result}. */
    public static ExecEnded of(BoxExecutionResult result, Duration duration) {
      ExecEnd end;
      if (result.status() == BoxExecutionStatus.TIMED_OUT) {
        end = ExecEnd.TIMEOUT;
      } else if (result.ok()) {
        end = ExecEnd.OK;
      } else {
        end = ExecEnd.NONZERO;
      }
      return new ExecEnded(
          result.backendName(),
          end,
          duration,
          result.stdoutTruncatedBytes() > 0,
          result.stderrTruncatedBytes() > 0);
    }

    /** An exec on {@code backend} that ended with an error instead of a result. */
    public static ExecEnded failed(String backend, Duration duration) {
      return new ExecEnded(backend, ExecEnd.ERROR, duration, false, false);
    }
  }

  /**
   * Fires when an exec has ended, with a result or with an error. A request refused before it
   * reached a session (an empty command) does not fire.
   */
  default void execEnded(ExecEnded exec) {}

  /**
   * Fires when a session's sandbox has started and the session is about to be served. An adopted
   * sandbox (a persistent session found still running after a restart) does not fire.
   *
   * @param backend the backend's name
   * @param preStarted whether the sandbox was taken from the backend's pool of pre-started ones
   * @param duration from the capacity check to the running sandbox, its workspace included
   */
  default void sessionStarted(String backend, boolean preStarted, Duration duration) {}
}
