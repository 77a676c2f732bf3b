package dev.box.agenthost;

import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessStatus;
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

  private final AgentHost host;
  private final String sessionId;
  private final String processId;
  private final McpSyncClient client;
  private final @Nullable Path staged;
  private final int retryCount;
  private final Thread monitor;
  private volatile Health health = Health.RUNNING;
  private int failures;
  private String lastPreview = "";

  McpServerHandle(
      AgentHost host,
      String sessionId,
      String processId,
      McpSyncClient client,
      @Nullable Path staged,
      int retryCount) {
    this.host = host;
    this.sessionId = sessionId;
    this.processId = processId;
    this.client = client;
    this.staged = staged;
    this.retryCount = retryCount;
    this.monitor = Thread.ofVirtual().name("box-mcp-health-" + processId).start(this::monitor);
  }

  /** The initialized MCP client. */
  public McpSyncClient client() {
    return client;
  }

  /** The Box session the server runs in. */
  public String sessionId() {
    return sessionId;
  }

  /** The server's process id in its session. */
  public String processId() {
    return processId;
  }

  /** How many fatal retries the launch took. */
  public int retryCount() {
    return retryCount;
  }

  /** What the monitor knows about the process. */
  public Health health() {
    return health;
  }

  private void monitor() {
    try {
      while (checkOnce()) {
        host.sleeper().sleep(HEALTH_INTERVAL);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Checks the process once, updating {@link #health()} and logging new stderr lines.
   *
   * @return whether to keep monitoring
   */
  synchronized boolean checkOnce() {
    if (health != Health.RUNNING) {
      return false;
    }
    try {
      BoxManagedProcessInfo info = host.client().process(sessionId, processId);
      failures = 0;
      logStderr(info.stderrPreview());
      if (info.status() == BoxManagedProcessStatus.EXITED) {
        health = Health.EXITED;
        host.errors()
            .record("mcp", "Box managed process exited unexpectedly: " + processId, sessionId);
        return false;
      }
      return true;
    } catch (BoxException e) {
      if (++failures >= HEALTH_FAILURES) {
        health = Health.UNKNOWN;
        host.errors().record(e, sessionId);
        return false;
      }
      return true;
    }
  }

  /** Logs the lines of {@code preview} that are new since the last check. */
  private void logStderr(String preview) {
    String fresh = preview.startsWith(lastPreview) ? preview.substring(lastPreview.length()) : "";
    if (!preview.startsWith(lastPreview)) {
      // The preview is a moving window: find where the old one's tail sits in the new one.
      int overlap = Math.min(lastPreview.length(), preview.length());
      while (overlap > 0
          && !preview.startsWith(lastPreview.substring(lastPreview.length() - overlap))) {
        overlap--;
      }
      fresh = preview.substring(overlap);
    }
    lastPreview = preview;
    fresh.lines().filter(l -> !l.isBlank()).forEach(this::logLine);
  }

  private void logLine(String line) {
    if (line.contains("ERROR") || line.contains("CRITICAL")) {
      log.warn("[{}] {}", processId, line);
    } else {
      log.debug("[{}] {}", processId, line);
    }
  }

  /** Closes the client, stops the process and deletes the staged files. */
  @Override
  public void close() {
    synchronized (this) {
      health = Health.CLOSED;
    }
    monitor.interrupt();
    client.close();
    try {
      host.client().stopProcess(sessionId, processId);
    } catch (BoxException e) {
      // Exited and forgotten already.
    }
    if (staged != null) {
      try {
        FileTrees.deleteTree(staged.getParent() == null ? staged : staged.getParent());
      } catch (IOException e) {
        log.warn("cannot delete the staged files of {}: {}", processId, e.toString());
      }
    }
  }
}
