package dev.box.core.session;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxValidationException;
import dev.box.core.backend.BackendStatus;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Freezes and thaws the sandboxes of sessions, under each session's id lock, and records the state
 * of a persistent session so that it stays paused across a restart. Both are idempotent.
 *
 * @param table the live sessions and their locks
 * @param status the backend's status, whose capabilities say whether it can pause
 * @param persistent where a persistent session's state is recorded
 * @param clock what {@code paused_at} is read from
 */
record SessionPauses(
    SessionTable table,
    Supplier<BackendStatus> status,
    PersistentSessions persistent,
    Clock clock) {
  private static final Logger log = LoggerFactory.getLogger(SessionPauses.class);

  /**
   * Freezes every process of {@code session}; nothing happens when it is paused already.
   *
   * @throws BoxValidationException when the backend cannot pause
   */
  void pause(Session session) {
    BackendStatus backend = status.get();
    if (!backend.capabilities().contains(BoxCapabilities.PAUSE)) {
      throw new BoxValidationException(
          "pause is not available on the " + backend.name() + " backend");
    }
    try (KeyedLocks.Held held = table.lockSettled(session.id())) {
      if (session.pausedAt() != null || session.closing()) {
        return;
      }
      session.sandbox().pause();
      Instant now = clock.instant();
      session.pausedSince(now);
      record(session, now);
      log.info("paused session {}", session.id());
    }
  }

  /** Thaws {@code session}; nothing happens when it runs. */
  void resume(Session session) {
    try (KeyedLocks.Held held = table.lockSettled(session.id())) {
      if (session.pausedAt() == null) {
        return;
      }
      session.sandbox().resume();
      session.pausedSince(null);
      record(session, null);
      log.info("resumed session {}", session.id());
    }
  }

  /** Thaws {@code session} before a use of it (an exec, a files call, a process, an attach). */
  void resumeIfPaused(Session session) {
    if (session.pausedAt() != null) {
      resume(session);
    }
  }

  private void record(Session session, @Nullable Instant pausedAt) {
    if (!session.persistent()) {
      return;
    }
    try {
      persistent.save(session.template(), session.createdAt(), pausedAt);
    } catch (IOException e) {
      log.warn(
          "could not record the state of persistent session {}: {}", session.id(), e.toString());
    }
  }
}
