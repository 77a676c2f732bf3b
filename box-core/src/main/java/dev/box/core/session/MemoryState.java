package dev.box.core.session;

import dev.box.core.backend.HostCommand;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * Whether a session's memory state (its processes) can be checkpointed and restored, as {@code
 * /v1/health} reports it under {@code enforced.memory_state}. Box keeps a session's files (pause,
 * fork, snapshots) but checkpoints no process: that would take CRIU working on the host, which
 * {@code criu check} decides, and even then Box does not drive it yet. The report is always {@code
 * absent}, with the reason this host gives; {@code criu check} runs once, from {@link #start} on a
 * thread of its own (the first report waits for it), or at the first report.
 */
final class MemoryState {
  private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(10);

  private final FutureTask<String> check = new FutureTask<>(() -> "absent: " + probe());

  /**
   * Runs {@code criu check} on a daemon thread, beside the rest of the server's start, which the
   * first report would otherwise wait for.
   */
  void start() {
    Thread.ofPlatform().daemon().name("box-criu-check").start(check);
  }

  /** {@code absent: why}. */
  String describe() {
    // Runs the check here unless it runs or ran already; then waits for its answer.
    check.run();
    try {
      return check.get();
    } catch (ExecutionException e) {
      return "absent: processes are not checkpointed (the check failed: " + e.getCause() + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "absent: processes are not checkpointed (interrupted while checking)";
    }
  }

  private static String probe() {
    Path criu = HostCommand.find("criu");
    if (criu == null) {
      return "processes are not checkpointed (CRIU is not installed)";
    }
    try {
      HostCommand.run(List.of(criu.toString(), "check"), "", CHECK_TIMEOUT);
      return "processes are not checkpointed (criu check passes here, but Box does not drive"
          + " CRIU yet)";
    } catch (IOException e) {
      return "processes are not checkpointed: CRIU cannot run on this host ("
          + e.getMessage()
          + ")";
    }
  }
}
