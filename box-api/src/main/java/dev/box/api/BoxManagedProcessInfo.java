package dev.box.api;

import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A managed process as the server reports it.
 *
 * @param sessionId the session it runs in
 * @param processId its key within the session
 * @param status running or exited
 * @param command the program
 * @param args its arguments
 * @param cwd its working directory
 * @param envKeys the names of the environment variables it was given, sorted (never the values)
 * @param attached whether a relay client is attached now
 * @param startedAt when it started (UTC)
 * @param exitedAt when it exited, or null
 * @param exitCode its exit code (128+N when killed by signal N), or null while running
 * @param stderrPreview the last (at most 4000) characters of its stderr
 * @param stdoutOffset how many stdout bytes it has written so far (relay offsets count these)
 * @param stdoutDelivered the stdout offset up to which the relay has delivered
 */
public record BoxManagedProcessInfo(
    String sessionId,
    String processId,
    BoxManagedProcessStatus status,
    String command,
    List<String> args,
    String cwd,
    List<String> envKeys,
    boolean attached,
    Instant startedAt,
    @Nullable Instant exitedAt,
    @Nullable Integer exitCode,
    String stderrPreview,
    long stdoutOffset,
    long stdoutDelivered) {

  /** Copies the lists. */
  public BoxManagedProcessInfo {
    args = List.copyOf(args);
    envKeys = List.copyOf(envKeys);
  }
}
