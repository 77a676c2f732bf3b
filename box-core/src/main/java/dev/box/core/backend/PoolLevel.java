package dev.box.core.backend;

/**
 * How full a backend's pool of pre-started sandboxes is at one moment.
 *
 * @param idle how many sandboxes wait for a session now
 * @param size how many wait at most ({@code pool_size})
 */
public record PoolLevel(int idle, int size) {

  /** Checks ranges. */
  public PoolLevel {
    if (idle < 0 || size < 0) {
      throw new IllegalArgumentException("a pool level must not be negative");
    }
  }
}
