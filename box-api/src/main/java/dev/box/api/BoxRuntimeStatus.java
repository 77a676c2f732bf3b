package dev.box.api;

import java.util.Map;

/**
 * The answer of {@code GET /v1/status}.
 *
 * @param backend the backend's health
 * @param activeSessions how many sessions exist
 * @param managedProcesses how many managed processes run
 * @param sessionTtlSec idle seconds after which a non-persistent session is reaped (0 = never)
 * @param limits the runtime's configured limits ({@code max_sessions}, {@code max_output_bytes},
 *     ...)
 */
public record BoxRuntimeStatus(
    BoxBackendHealth backend,
    int activeSessions,
    int managedProcesses,
    long sessionTtlSec,
    Map<String, Object> limits) {

  /** Copies {@code limits}. */
  public BoxRuntimeStatus {
    limits = Map.copyOf(limits);
  }
}
