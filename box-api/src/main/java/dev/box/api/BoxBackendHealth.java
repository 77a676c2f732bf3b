package dev.box.api;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code GET /v1/health}: which backend serves sessions and what it enforces.
 *
 * @param name the backend's name, or null when none is selected
 * @param available whether it can run sandboxes now
 * @param reason how it runs, or why it is unavailable
 * @param enforced for each limit ({@code memory}, {@code pids}, {@code cpu}, {@code kill}, ...) how
 *     it is enforced, or {@code none}
 */
public record BoxBackendHealth(
    @Nullable String name, boolean available, String reason, Map<String, String> enforced) {

  /** Copies {@code enforced}. */
  public BoxBackendHealth {
    enforced = Map.copyOf(enforced);
  }
}
