package dev.box.agenthost;

import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxExecutionStatus;
import org.jspecify.annotations.Nullable;

/**
 * An exec's result as a model should see it, the reference's tool result: each stream cut by {@link
 * OutputCut} with a flag saying whether it was.
 *
 * @param sessionId the session it ran in
 * @param backend the backend that ran it
 * @param status completed, or timed_out
 * @param ok whether it completed with exit code 0
 * @param exitCode the exit code, null when timed out
 * @param stdout standard output, cut
 * @param stderr standard error, cut
 * @param stdoutTruncated whether stdout was cut, here or by the server
 * @param stderrTruncated whether stderr was cut, here or by the server
 * @param durationMs the wall-clock duration in milliseconds
 */
public record ExecToolResult(
    String sessionId,
    String backend,
    BoxExecutionStatus status,
    boolean ok,
    @Nullable Integer exitCode,
    String stdout,
    String stderr,
    boolean stdoutTruncated,
    boolean stderrTruncated,
    long durationMs) {

  /** {@code result} with each stream cut to {@code limit} characters. */
  public static ExecToolResult of(BoxExecutionResult result, int limit) {
    OutputCut out = OutputCut.of(result.stdout(), limit);
    OutputCut err = OutputCut.of(result.stderr(), limit);
    return new ExecToolResult(
        result.sessionId(),
        result.backendName(),
        result.status(),
        result.ok(),
        result.exitCode(),
        out.text(),
        err.text(),
        out.truncated() || result.stdoutTruncatedBytes() > 0,
        err.truncated() || result.stderrTruncatedBytes() > 0,
        result.durationMs());
  }
}
