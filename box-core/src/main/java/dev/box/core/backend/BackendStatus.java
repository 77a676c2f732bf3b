package dev.box.core.backend;

import java.util.Map;

/**
 * Whether a backend is available and what it enforces.
 *
 * @param name the backend's name
 * @param available whether it can run sandboxes now
 * @param reason why it is not available, or a short description of how it runs when it is
 * @param enforced for each limit ({@code memory}, {@code pids}, {@code cpu}, ...) how it is
 *     enforced ({@code cgroup-v1}, {@code cgroup-v2}, {@code rlimit}) or {@code none}; never claims
 *     more than what is applied
 */
public record BackendStatus(
    String name, boolean available, String reason, Map<String, String> enforced) {

  /** Copies {@code enforced}. */
  public BackendStatus {
    enforced = Map.copyOf(enforced);
  }
}
