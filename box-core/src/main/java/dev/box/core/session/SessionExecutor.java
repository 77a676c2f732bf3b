package dev.box.core.session;

import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.api.time.Ticker;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxGoneException;
import dev.box.core.exec.ExecListener;
import dev.box.core.exec.ExecOutcome;
import dev.box.core.exec.ExecRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one exec in its session: acquires the session (creating it when needed), runs the command
 * with its timeout and bounded output, and says in the result when the workspace quota was what a
 * failed write hit.
 *
 * @param acquirer finds or starts the session
 * @param runner runs the command and kills its tree at the timeout
 * @param slot the backend, whose name the result carries
 * @param clock what {@code last_used_at} is read from
 * @param ticker what the duration reported to {@code listener} is read from
 * @param listener told of every exec that reached a session, with its result or error
 */
record SessionExecutor(
    SessionAcquirer acquirer,
    ExecRunner runner,
    BackendSlot slot,
    Clock clock,
    Ticker ticker,
    SessionListener listener) {
  private static final Logger log = LoggerFactory.getLogger(SessionExecutor.class);

  /** Free space below which a workspace quota counts as used up. */
  private static final long QUOTA_FULL_BYTES = 1024 * 1024;

  /** See {@link SessionManager#exec(BoxSpec, ExecListener)}. */
  BoxExecutionResult exec(BoxSpec spec, ExecListener output) {
    if (spec.cmd().isEmpty()) {
      throw new BoxValidationException("cmd must not be empty");
    }
    long started = ticker.read();
    BoxExecutionResult result;
    try {
      result = execRetryingGone(spec, output);
    } catch (RuntimeException e) {
      listener.execEnded(SessionListener.ExecEnded.failed(slot.backend().name(), since(started)));
      throw e;
    }
    listener.execEnded(SessionListener.ExecEnded.of(result, since(started)));
    return result;
  }

  private BoxExecutionResult execRetryingGone(BoxSpec spec, ExecListener output) {
    try {
      return execOnce(spec, output);
    } catch (SandboxGoneException e) {
      // Nothing of the command ran: its sandbox ended first. The next acquire starts a new one.
      log.warn("Box session {}: {}; starting a new sandbox", spec.sessionId(), e.getMessage());
      return execOnce(spec, output);
    }
  }

  private Duration since(long started) {
    return Duration.ofNanos(ticker.read() - started);
  }

  private BoxExecutionResult execOnce(BoxSpec spec, ExecListener output) {
    Session session = acquirer.acquire(spec, true).session();
    try {
      ProcessSpec process =
          new ProcessSpec(new ProcessSpec.Shell(spec.cmd()), spec.workdir(), spec.env(), false);
      ExecOutcome outcome =
          runner.run(session.sandbox(), process, Duration.ofSeconds(spec.timeoutSec()), output);
      String note = quotaNote(session);
      if (!note.isEmpty()) {
        output.note(note);
      }
      return new BoxExecutionResult(
          session.id(),
          slot.backend().name(),
          outcome.status(),
          outcome.exitCode(),
          outcome.stdout(),
          outcome.stderr() + note,
          outcome.durationMs(),
          outcome.stdoutDroppedBytes(),
          outcome.stderrDroppedBytes());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BoxRuntimeUnavailableException("exec was interrupted");
    } finally {
      session.execEnded();
      session.touch(clock.instant());
    }
  }

  /**
   * A line for the exec's stderr when the session's workspace quota is used up, so that the result
   * says which limit a failed write hit; empty otherwise.
   */
  private static String quotaNote(Session session) {
    int quota = session.template().workspaceQuotaMb();
    Path workspace = session.privateWorkspace();
    if (quota <= 0 || workspace == null) {
      return "";
    }
    try {
      if (Files.getFileStore(workspace).getUsableSpace() < QUOTA_FULL_BYTES) {
        return "\nbox: the workspace quota (workspace_quota_mb=" + quota + ") is used up";
      }
    } catch (IOException e) {
      log.debug("cannot read the free space of {}: {}", workspace, e.toString());
    }
    return "";
  }
}
