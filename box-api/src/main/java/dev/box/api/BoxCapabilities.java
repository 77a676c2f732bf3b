package dev.box.api;

/**
 * The optional features a backend may declare in {@link BoxBackendHealth#capabilities()}. What a
 * backend does not declare it does not do: the conformance suite checks both ways.
 */
public final class BoxCapabilities {
  /** Sessions run {@code spec.image}; without it the image is only recorded. */
  public static final String IMAGES = "images";

  /**
   * {@code host_path} and {@code extra_mounts} mount directories of the server's host; without it a
   * spec that names any is refused ({@code validation_error}): a cluster has no host paths.
   */
  public static final String HOST_PATHS = "host_paths";

  /** {@code read_only_rootfs} makes the root filesystem read-only, with a writable /tmp. */
  public static final String READ_ONLY_ROOTFS = "read_only_rootfs";

  /** A managed process's {@code memory_mb} limits that process tree within the session's. */
  public static final String PROCESS_MEMORY_LIMIT = "process_memory_limit";

  /**
   * {@code GET /v1/sessions/{id}/terminal} opens a terminal (a pseudo-terminal in the sandbox);
   * without it that route is refused ({@code validation_error}).
   */
  public static final String TERMINAL = "terminal";

  /**
   * A sandbox's TCP ports are reachable through Box ({@code /v1/sessions/{id}/ports/{port}/...} and
   * preview links), with the network on or off; without it those routes are refused.
   */
  public static final String PORTS = "ports";

  /**
   * {@code POST /v1/sessions/{id}/pause} freezes every process of a session and {@code resume}
   * thaws it; without it those routes are refused ({@code validation_error}).
   */
  public static final String PAUSE = "pause";

  private BoxCapabilities() {}
}
