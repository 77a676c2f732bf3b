package dev.box.core.backend;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Whether a backend is available, what it enforces and what it can do.
 *
 * @param name the backend's name
 * @param available whether it can run sandboxes now
 * @param reason why it is not available, or a short description of how it runs when it is
 * @param enforced for each limit ({@code memory}, {@code pids}, {@code cpu}, ...) how it is
 *     enforced ({@code cgroup-v1}, {@code cgroup-v2}, {@code rlimit}) or {@code none}; never claims
 *     more than what is applied
 * @param capabilities the optional features it supports ({@link dev.box.api.BoxCapabilities})
 */
public record BackendStatus(
    String name,
    boolean available,
    String reason,
    Map<String, String> enforced,
    Set<String> capabilities) {

  /** The name of the status when no backend could be selected; its reason says why. */
  public static final String NONE = "none";

  /** Copies the collections. */
  public BackendStatus {
    enforced = Map.copyOf(enforced);
    capabilities = Set.copyOf(capabilities);
  }

  /** This status with {@code capability} among its capabilities. */
  public BackendStatus withCapability(String capability) {
    Set<String> more = new HashSet<>(capabilities);
    more.add(capability);
    return new BackendStatus(name, available, reason, enforced, more);
  }

  /** A status with no optional capabilities. */
  public BackendStatus(
      String name, boolean available, String reason, Map<String, String> enforced) {
    this(name, available, reason, enforced, Set.of());
  }
}
