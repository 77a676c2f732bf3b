package dev.box.server;

import dev.box.core.backend.SandboxBackend;
import dev.box.core.session.SessionManager;
import dev.box.langbot.LangBotControl;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * What a running server owns until it closes: its sessions, LangBot's control plane over them, the
 * reaper thread that expires idle sessions and LangBot's grants, the pool that pumps the sessions'
 * output, and the lock on its data directory.
 */
record ServerResources(
    SessionManager sessions,
    LangBotControl langbot,
    ScheduledExecutorService reaper,
    ExecutorService pumps,
    DataDirLock lock) {

  /** Stops the sessions and the threads, closes the backend and releases the data directory. */
  void close() {
    release(sessions, reaper, pumps, null, lock);
  }

  /**
   * Releases what a start that failed halfway had acquired, in the order {@link #close()} does;
   * {@code backend} is closed only when no sessions took it over.
   */
  static void release(
      @Nullable SessionManager sessions,
      @Nullable ScheduledExecutorService reaper,
      @Nullable ExecutorService pumps,
      @Nullable SandboxBackend backend,
      @Nullable DataDirLock lock) {
    if (reaper != null) {
      reaper.shutdownNow();
    }
    if (sessions != null) {
      sessions.close();
      // LangBot's box_init may have replaced the backend the server started with.
      sessions.backendChoice().backend().close();
    } else if (backend != null) {
      backend.close();
    }
    if (pumps != null) {
      pumps.shutdownNow();
    }
    if (lock != null) {
      lock.close();
    }
  }
}
