package dev.box.core.backend;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A sandbox technology that runs Box sessions: one live sandbox per session, into which commands
 * are spawned.
 *
 * <p>Implementations are thread-safe: sessions are started, used and destroyed concurrently.
 */
public interface SandboxBackend extends AutoCloseable {

  /** The backend's name as users select it, for example {@code bwrap}. */
  String name();

  /** Whether the backend can run sandboxes here, and which limits it enforces. */
  BackendStatus status();

  /**
   * Starts the sandbox of one session and returns when commands can be spawned in it.
   *
   * @throws dev.box.api.BoxException when the sandbox cannot be started
   */
  Sandbox start(SandboxSpec spec);

  /**
   * Removes what earlier server instances of the same data directory left behind (sandboxes,
   * cgroups), never touching the running instance's own sandboxes.
   */
  void removeOrphans();

  /**
   * Finds the sandbox of the persistent session {@code spec} that an earlier server instance of the
   * same data directory left running (it crashed), and takes it over with everything running in it;
   * null when there is none, or when this backend's sandboxes cannot outlive their server. Called
   * before {@link #start} when a persistent session is restored. The default adopts nothing.
   */
  default @Nullable Sandbox adopt(SandboxSpec spec) {
    return null;
  }

  /**
   * The sessions this backend keeps where every server of the tenant sees them, or null (the
   * default) when a session belongs to the server that started it.
   */
  default @Nullable SharedSessions sharedSessions() {
    return null;
  }

  /**
   * As {@link #removeOrphans()}, sparing the running sandboxes of persistent sessions, which the
   * restore that follows may {@link #adopt}; the default spares nothing. After the restore the
   * runtime calls {@link #removeOrphans()}, which removes those not adopted.
   */
  default void removeOrphansSparingPersistent() {
    removeOrphans();
  }

  /**
   * Applies the backend's own section of LangBot's {@code box_init} configuration (for example
   * {@code docker: {cpu_limit_enabled: false}}); the default has no settings and ignores it.
   *
   * @throws dev.box.api.BoxException with a validation code for a value it refuses
   */
  default void configure(Map<String, Object> section) {}

  /**
   * How full the backend's pool of pre-started sandboxes is, for the metrics; null when it keeps
   * none (the default). Cheap: read on every scrape.
   */
  default @Nullable PoolLevel poolLevel() {
    return null;
  }

  /**
   * The copies this backend keeps of its sandboxes' writable roots, for forks and snapshots; null
   * (the default) when its sandboxes have no root of their own to copy: a fork or a snapshot then
   * copies the workspace only.
   */
  default @Nullable RootCopies roots() {
    return null;
  }

  /** Releases the backend's own resources; sessions are destroyed by the runtime before. */
  @Override
  void close();
}
