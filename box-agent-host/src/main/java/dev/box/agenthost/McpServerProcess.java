package dev.box.agenthost;

import dev.box.agenthost.McpServerHandle.Health;
import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The managed process an MCP server runs as, and its health monitor: a virtual thread that asks the
 * Box server about the process every {@link McpServerHandle#HEALTH_INTERVAL}, logs its new stderr
 * lines, and stops once the process exited or {@value McpServerHandle#HEALTH_FAILURES} checks in a
 * row failed.
 */
final class McpServerProcess {
  /** The process {@code processId} in the session {@code sessionId}. */
  record Id(String sessionId, String processId) {}

  private static final Logger log = LoggerFactory.getLogger(McpServerProcess.class);

  private final AgentHost host;
  private final Id id;
  private final Thread monitor;
  private volatile Health health = Health.RUNNING;
  private int failures;
  private String lastPreview = "";

  /** Starts monitoring the process {@code id}. */
  McpServerProcess(AgentHost host, Id id) {
    this.host = host;
    this.id = id;
    this.monitor = Thread.ofVirtual().name("box-mcp-health-" + id.processId()).start(this::monitor);
  }

  Id id() {
    return id;
  }

  Health health() {
    return health;
  }

  private void monitor() {
    try {
      while (checkOnce()) {
        host.sleeper().sleep(McpServerHandle.HEALTH_INTERVAL);
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
      BoxManagedProcessInfo info = host.client().process(id.sessionId(), id.processId());
      failures = 0;
      logStderr(info.stderrPreview());
      if (info.status() == BoxManagedProcessStatus.EXITED) {
        health = Health.EXITED;
        host.errors()
            .record(
                "mcp",
                "Box managed process exited unexpectedly: " + id.processId(),
                id.sessionId());
        return false;
      }
      return true;
    } catch (BoxException e) {
      if (++failures >= McpServerHandle.HEALTH_FAILURES) {
        health = Health.UNKNOWN;
        host.errors().record(e, id.sessionId());
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
      log.warn("[{}] {}", id.processId(), line);
    } else {
      log.debug("[{}] {}", id.processId(), line);
    }
  }

  /** Ends the monitor: {@link #health()} is {@link Health#CLOSED} from now on. */
  void stopMonitor() {
    synchronized (this) {
      health = Health.CLOSED;
    }
    monitor.interrupt();
  }

  /** Stops the process, unless it exited and was forgotten already. */
  void stop() {
    try {
      host.client().stopProcess(id.sessionId(), id.processId());
    } catch (BoxException e) {
      // Exited and forgotten already.
    }
  }
}
