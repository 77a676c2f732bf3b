package dev.box.api;

import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of one exec.
 *
 * <p>A non-zero exit code is a normal result, not an error. Output is returned as produced (not
 * stripped); each stream is bounded while it is read: past the bound, the head and the tail are
 * kept with one marker line between them, and {@code stdout_truncated_bytes} / {@code
 * stderr_truncated_bytes} say how many bytes were dropped.
 *
 * @param sessionId the session it ran in
 * @param backendName the backend that ran it
 * @param status completed, or timed_out when the hard timeout killed it
 * @param exitCode the exit code, null when timed out (128+N when killed by signal N)
 * @param stdout standard output, UTF-8 with invalid bytes replaced by U+FFFD
 * @param stderr standard error, likewise
 * @param durationMs wall-clock duration in milliseconds
 * @param stdoutTruncatedBytes bytes of stdout dropped from the middle, 0 when none
 * @param stderrTruncatedBytes bytes of stderr dropped from the middle, 0 when none
 */
public record BoxExecutionResult(
    String sessionId,
    String backendName,
    BoxExecutionStatus status,
    @Nullable Integer exitCode,
    String stdout,
    String stderr,
    long durationMs,
    long stdoutTruncatedBytes,
    long stderrTruncatedBytes) {

  /** True when the command completed with exit code 0. */
  @JsonProperty("ok")
  public boolean ok() {
    return status == BoxExecutionStatus.COMPLETED && exitCode != null && exitCode == 0;
  }
}
