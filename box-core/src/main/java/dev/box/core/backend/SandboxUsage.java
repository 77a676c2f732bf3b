package dev.box.core.backend;

/**
 * What the processes of one sandbox use at one moment, as its backend measures it. A value the
 * backend cannot measure is {@link #UNMEASURED}, never a guess.
 *
 * @param cpuNanos the CPU time its processes have used since it started, user and system together,
 *     in nanoseconds
 * @param memoryBytes the memory its processes use without the page cache, in bytes
 * @param cacheBytes the page cache charged to it, in bytes
 */
public record SandboxUsage(long cpuNanos, long memoryBytes, long cacheBytes) {
  /** A value the backend cannot measure. */
  public static final long UNMEASURED = -1;

  /** Nothing measured: what a backend without a way to measure answers. */
  public static final SandboxUsage UNKNOWN = new SandboxUsage(UNMEASURED, UNMEASURED, UNMEASURED);

  /** Refuses a value below {@link #UNMEASURED}. */
  public SandboxUsage {
    if (cpuNanos < UNMEASURED || memoryBytes < UNMEASURED || cacheBytes < UNMEASURED) {
      throw new IllegalArgumentException(
          "usage values are bytes or nanoseconds, or -1 when unmeasured");
    }
  }
}
