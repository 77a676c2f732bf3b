package dev.box.core;

import dev.box.core.settings.RuntimeLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The settings of one runtime.
 *
 * @param dataDir where private workspaces and runtime state live
 * @param sessionTtl idle time after which a non-persistent session is reaped; zero disables reaping
 * @param maxSessions the most sessions that may exist at once (creating and closing ones included)
 * @param maxOutputBytes the bytes of each output stream an exec keeps
 * @param allowedMountRoots host directories under which mounts are allowed; empty allows all that
 *     is not blocked
 * @param processes the limits of managed processes
 * @param files the bounds of the files routes
 * @param pausedSessionTtl time after which a non-persistent session paused all along is deleted;
 *     zero never deletes one
 * @param store the bounds of the workspace store: its snapshots and the size of its image
 */
public record RuntimeConfig(
    Path dataDir,
    Duration sessionTtl,
    int maxSessions,
    int maxOutputBytes,
    List<Path> allowedMountRoots,
    ProcessLimits processes,
    FileLimits files,
    Duration pausedSessionTtl,
    StoreLimits store) {

  /**
   * The limits of managed processes.
   *
   * @param maxRunning the most managed processes running at once, all sessions together
   * @param maxCompleted the most exited records kept (oldest evicted first)
   * @param completedRetention how long an exited record is kept
   * @param stdoutBufferBytes the stdout buffer of each process
   */
  public record ProcessLimits(
      int maxRunning, int maxCompleted, Duration completedRetention, int stdoutBufferBytes) {

    /** The defaults of {@link RuntimeLimits}. */
    public static final ProcessLimits DEFAULTS =
        new ProcessLimits(
            RuntimeLimits.MAX_MANAGED_PROCESSES.defaultValue(),
            RuntimeLimits.MAX_COMPLETED_PROCESSES.defaultValue(),
            Duration.ofSeconds(RuntimeLimits.COMPLETED_PROCESS_RETENTION_SEC.defaultValue()),
            RuntimeLimits.PROCESS_BUFFER_BYTES.defaultValue());

    /** Checks ranges. */
    public ProcessLimits {
      if (maxRunning < 0 || maxCompleted < 0 || completedRetention.isNegative()) {
        throw new IllegalArgumentException("managed process limits must not be negative");
      }
      if (stdoutBufferBytes < 1024) {
        throw new IllegalArgumentException("the stdout buffer must be at least 1024 bytes");
      }
    }
  }

  /**
   * The bounds of the files routes.
   *
   * @param maxFileBytes the largest file uploaded or downloaded, in bytes
   * @param maxArchiveBytes the largest tar archive uploaded or downloaded, in bytes
   * @param maxArchiveEntries the most entries of an uploaded archive, and of a listing
   */
  public record FileLimits(long maxFileBytes, long maxArchiveBytes, int maxArchiveEntries) {

    /** The defaults of {@link RuntimeLimits}. */
    public static final FileLimits DEFAULTS =
        new FileLimits(
            RuntimeLimits.MAX_FILE_BYTES.defaultValue(),
            RuntimeLimits.MAX_ARCHIVE_BYTES.defaultValue(),
            RuntimeLimits.MAX_ARCHIVE_ENTRIES.defaultValue());

    /** Checks ranges. */
    public FileLimits {
      if (maxFileBytes < 1 || maxArchiveBytes < 1024 || maxArchiveEntries < 1) {
        throw new IllegalArgumentException(
            "file limits must be positive, and an archive may hold at least 1024 bytes");
      }
    }
  }

  /**
   * The bounds of the workspace store.
   *
   * @param maxSnapshots the most snapshots kept at once; a snapshot beyond is refused
   * @param imageGib the size of the sparse btrfs image of the store, when it needs one
   */
  public record StoreLimits(int maxSnapshots, int imageGib) {

    /** The defaults of {@link RuntimeLimits}. */
    public static final StoreLimits DEFAULTS =
        new StoreLimits(
            RuntimeLimits.MAX_SNAPSHOTS.defaultValue(),
            RuntimeLimits.WORKSPACE_STORE_GIB.defaultValue());

    /** Checks ranges. */
    public StoreLimits {
      if (maxSnapshots < 0 || imageGib < 1) {
        throw new IllegalArgumentException(
            "max_snapshots must not be negative and workspace_store_gib must be at least 1");
      }
    }
  }

  /** Settings with the default managed-process limits, file bounds and paused-session TTL. */
  public RuntimeConfig(
      Path dataDir,
      Duration sessionTtl,
      int maxSessions,
      int maxOutputBytes,
      List<Path> allowedMountRoots) {
    this(
        dataDir,
        sessionTtl,
        maxSessions,
        maxOutputBytes,
        allowedMountRoots,
        ProcessLimits.DEFAULTS,
        FileLimits.DEFAULTS,
        Duration.ofSeconds(RuntimeLimits.PAUSED_SESSION_TTL_SEC.defaultValue()),
        StoreLimits.DEFAULTS);
  }

  /** The defaults of {@link RuntimeLimits}, with {@code dataDir}. */
  public static RuntimeConfig defaults(Path dataDir) {
    return new RuntimeConfig(
        dataDir,
        Duration.ofSeconds(RuntimeLimits.SESSION_TTL_SEC.defaultValue()),
        RuntimeLimits.MAX_SESSIONS.defaultValue(),
        RuntimeLimits.MAX_OUTPUT_BYTES.defaultValue(),
        List.of());
  }

  /** Checks ranges and copies the list. */
  public RuntimeConfig {
    if (sessionTtl.isNegative()) {
      throw new IllegalArgumentException(
          RuntimeLimits.SESSION_TTL_SEC.key() + " must not be negative");
    }
    if (pausedSessionTtl.isNegative()) {
      throw new IllegalArgumentException(
          RuntimeLimits.PAUSED_SESSION_TTL_SEC.key() + " must not be negative");
    }
    if (maxSessions < 0) {
      throw new IllegalArgumentException(
          RuntimeLimits.MAX_SESSIONS.key() + " must not be negative");
    }
    if (maxOutputBytes < RuntimeLimits.MAX_OUTPUT_BYTES.min()) {
      throw new IllegalArgumentException(
          RuntimeLimits.MAX_OUTPUT_BYTES.key()
              + " must be at least "
              + RuntimeLimits.MAX_OUTPUT_BYTES.min());
    }
    allowedMountRoots = List.copyOf(allowedMountRoots);
  }

  /** A copy with another session TTL. */
  public RuntimeConfig withSessionTtl(Duration ttl) {
    return new RuntimeConfig(
        dataDir,
        ttl,
        maxSessions,
        maxOutputBytes,
        allowedMountRoots,
        processes,
        files,
        pausedSessionTtl,
        store);
  }

  /** A copy with another session capacity. */
  public RuntimeConfig withMaxSessions(int max) {
    return new RuntimeConfig(
        dataDir,
        sessionTtl,
        max,
        maxOutputBytes,
        allowedMountRoots,
        processes,
        files,
        pausedSessionTtl,
        store);
  }

  /** A copy with other managed-process limits. */
  public RuntimeConfig withProcesses(ProcessLimits limits) {
    return new RuntimeConfig(
        dataDir,
        sessionTtl,
        maxSessions,
        maxOutputBytes,
        allowedMountRoots,
        limits,
        files,
        pausedSessionTtl,
        store);
  }
}
