package dev.box.core.exec;

import dev.box.api.BoxExecutionStatus;
import org.jspecify.annotations.Nullable;

/**
 * What one exec produced, before it is tagged with its session and backend.
 *
 * @param status completed or timed out
 * @param exitCode the exit code, null when timed out
 * @param stdout the captured stdout
 * @param stderr the captured stderr
 * @param durationMs wall-clock duration
 * @param stdoutDroppedBytes bytes dropped from the middle of stdout
 * @param stderrDroppedBytes bytes dropped from the middle of stderr
 */
public record ExecOutcome(
    BoxExecutionStatus status,
    @Nullable Integer exitCode,
    String stdout,
    String stderr,
    long durationMs,
    long stdoutDroppedBytes,
    long stderrDroppedBytes) {}
