package dev.box.core.settings;

import java.util.List;

/**
 * The limits of a runtime, with their defaults and ranges (and whether containers get a CPU quota):
 * the one table that {@code box serve}'s settings and LangBot's {@code box.limits} ({@code
 * box_init}) both read. Where a key is known to LangBot, its default, range and messages are those
 * of LangBot's own Box runtime, which LangBot configures with the same keys.
 */
public final class RuntimeLimits {
  private static final int MIB = 1024 * 1024;

  /** The most sessions at once; both. */
  public static final IntSetting MAX_SESSIONS = new IntSetting("max_sessions", 64, 0, 5000);

  /** The most managed processes running at once, all sessions together; both. */
  public static final IntSetting MAX_MANAGED_PROCESSES =
      new IntSetting("max_managed_processes", 64, 0, 1024);

  /** The most exited managed processes whose records are kept; both. */
  public static final IntSetting MAX_COMPLETED_PROCESSES =
      new IntSetting("max_completed_processes", 256, 0, 10_000);

  /** Seconds an exited managed process's record is kept; both. */
  public static final IntSetting COMPLETED_PROCESS_RETENTION_SEC =
      new IntSetting("completed_process_retention_sec", 300, 0, 86_400);

  /** The most admission records (one per logical session) LangBot's tenancy keeps; LangBot only. */
  public static final IntSetting MAX_ADMISSION_RECORDS =
      new IntSetting("max_admission_records", 100_000, 1, 250_000);

  /** The bytes one file sent with {@code __file_chunk} may hold; LangBot only. */
  public static final IntSetting MAX_RPC_FILE_BYTES =
      new IntSetting("max_rpc_file_bytes", 20 * MIB, 1, 100 * MIB);

  /** Idle seconds after which a non-persistent session is reaped, 0 for never; server only. */
  public static final IntSetting SESSION_TTL_SEC =
      new IntSetting("session_ttl_sec", 300, 0, 30 * 86_400);

  /**
   * Seconds a non-persistent session may stay paused before it is deleted, 0 for never; server
   * only. The idle TTL does not apply to a paused session.
   */
  public static final IntSetting PAUSED_SESSION_TTL_SEC =
      new IntSetting("paused_session_ttl_sec", 86_400, 0, 365 * 86_400);

  /** The bytes kept per output stream of an exec; server only. */
  public static final IntSetting MAX_OUTPUT_BYTES =
      new IntSetting("max_output_bytes", MIB, 1024, 256 * MIB);

  /** The stdout buffer of each managed process, in bytes; server only. */
  public static final IntSetting PROCESS_BUFFER_BYTES =
      new IntSetting("process_buffer_bytes", MIB, 1024, 256 * MIB);

  /** The largest file a files route uploads or downloads, in bytes; server only. */
  public static final IntSetting MAX_FILE_BYTES =
      new IntSetting("max_file_bytes", 64 * MIB, 1, Integer.MAX_VALUE);

  /** The largest tar archive a files route uploads or downloads, in bytes; server only. */
  public static final IntSetting MAX_ARCHIVE_BYTES =
      new IntSetting("max_archive_bytes", 256 * MIB, 1024, Integer.MAX_VALUE);

  /** The most entries of an uploaded tar archive, and of a directory listing; server only. */
  public static final IntSetting MAX_ARCHIVE_ENTRIES =
      new IntSetting("max_archive_entries", 100_000, 1, 10_000_000);

  /** The most snapshots of workspaces kept at once; server only. */
  public static final IntSetting MAX_SNAPSHOTS = new IntSetting("max_snapshots", 64, 0, 10_000);

  /**
   * The size in GiB of the sparse btrfs image that holds the private workspaces and snapshots when
   * the data dir is not on btrfs (it takes disk only as it is written); server only.
   */
  public static final IntSetting WORKSPACE_STORE_GIB =
      new IntSetting("workspace_store_gib", 64, 1, 1 << 20);

  /**
   * Whether containers get a CPU quota: on unless {@code false} or {@code 0}, as LangBot's {@code
   * box.docker.cpu_limit_enabled} reads a string; the server's {@code docker_cpu_limit}.
   */
  public static final BooleanSetting CPU_LIMIT = BooleanSetting.onUnless("false", "0");

  /** The limits {@code box serve} takes, as flags, {@code BOX_*} variables or file entries. */
  public static final List<IntSetting> SERVER =
      List.of(
          SESSION_TTL_SEC,
          PAUSED_SESSION_TTL_SEC,
          MAX_SESSIONS,
          MAX_OUTPUT_BYTES,
          MAX_MANAGED_PROCESSES,
          MAX_COMPLETED_PROCESSES,
          COMPLETED_PROCESS_RETENTION_SEC,
          PROCESS_BUFFER_BYTES,
          MAX_FILE_BYTES,
          MAX_ARCHIVE_BYTES,
          MAX_ARCHIVE_ENTRIES,
          MAX_SNAPSHOTS,
          WORKSPACE_STORE_GIB);

  private RuntimeLimits() {}
}
