package dev.box.agenthost;

import dev.box.api.internal.FileTrees;
import io.modelcontextprotocol.client.McpSyncClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stdio MCP server running in a sandbox, launched by {@link McpLauncher}: its initialized MCP
 * client, and a health monitor that asks the server about the process every {@link
 * #HEALTH_INTERVAL} (as the reference does) and logs its new stderr lines.
 *
 * <p>The client's transport reconnects by itself when the relay connection drops, resuming where it
 * stopped, so the monitor only watches for the process ending: exited, or {@value #HEALTH_FAILURES}
 * failed checks in a row. {@link #close()} closes the client, stops this server's process and
 * deletes its staged files; the shared session stays, other servers live in it.
 */
public final class McpServerHandle implements AutoCloseable {
  /** How often the monitor checks the process. */
  public static final Duration HEALTH_INTERVAL = Duration.ofSeconds(5);

  /** How many failed checks in a row end the monitor. */
  public static final int HEALTH_FAILURES = 3;

  /** What the monitor knows about the process. */
  public enum Health {
    /** Running at the last check. */
    RUNNING,
    /** The process exited: "Box managed process exited unexpectedly". */
    EXITED,
    /** {@value #HEALTH_FAILURES} checks in a row failed. */
    UNKNOWN,
    /** Closed by its owner. */
    CLOSED
  }

  private static final Logger log = LoggerFactory.getLogger(McpServerHandle.class);

  private final McpSyncClient client;
  private final McpServerProcess process;
  private final @Nullable Path staged;
  private final int retryCount;

  McpServerHandle(
      McpSyncClient client, McpServerProcess process, @Nullable Path staged, int retryCount) {
    this.client = client;
    this.process = process;
    this.staged = staged;
    this.retryCount = retryCount;
  }

  /** The initialized MCP client. */
  public McpSyncClient client() {
    return client;
  }

  /** The Box session the server runs in. */
  public String sessionId() {
    return process.id().sessionId();
  }

  /** The server's process id in its session. */
  public String processId() {
    return process.id().processId();
  }

  /** How many fatal retries the launch took. */
  public int retryCount() {
    return retryCount;
  }

  /** What the monitor knows about the process. */
  public Health health() {
    return process.health();
  }

  /**
   * Checks the process once, updating {@link #health()} and logging new stderr lines.
   *
   * @return whether to keep monitoring
   */
  boolean checkOnce() {
    return process.checkOnce();
  }

  /** Closes the client, stops the process and deletes the staged files. */
  @Override
  public void close() {
    process.stopMonitor();
    client.close();
    process.stop();
    if (staged != null) {
      try {
        FileTrees.deleteTree(staged.getParent() == null ? staged : staged.getParent());
      } catch (IOException e) {
        log.warn("cannot delete the staged files of {}: {}", processId(), e.toString());
      }
    }
  }
}
