package dev.box.core.session;

import dev.box.api.BoxException;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSpec;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SharedSessions;
import java.time.Clock;
import java.time.Instant;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds or starts the session a request runs in: the live session of its id when it serves the
 * spec, else a new sandbox. The id is locked only to look and to claim it; the sandbox starts with
 * no lock held, under a lease of the backend so that no switch replaces it meanwhile.
 *
 * @param slot the backend, leased for each start
 * @param table the live sessions, their locks and claims
 * @param sandboxes what starts and stops a session's sandbox
 * @param clock what {@code last_used_at} is read from
 * @param shuttingDown whether the runtime refuses new work
 * @param pauses resumes a paused session a request reuses
 */
record SessionAcquirer(
    BackendSlot slot,
    SessionTable table,
    SessionSandboxes sandboxes,
    Clock clock,
    BooleanSupplier shuttingDown,
    SessionPauses pauses) {
  private static final Logger log = LoggerFactory.getLogger(SessionAcquirer.class);

  /** A session for one request, and whether it was created for it. */
  record Use(Session session, boolean created) {}

  /**
   * The session {@code spec.session_id} for a request: the live one when it serves the spec, else a
   * new sandbox started for it; an exec is counted in the session before any lock is released.
   */
  Use acquire(BoxSpec spec, boolean forExec) {
    String id = spec.sessionId();
    adoptShared(id);
    try (BackendSlot.Lease lease = slot.lease()) {
      Session stale;
      try (KeyedLocks.Held held = table.lockSettled(id)) {
        checkRunning();
        Session existing = table.get(id);
        if (existing != null && reusable(existing, spec)) {
          pauses.resumeIfPaused(existing);
          existing.touch(clock.instant());
          if (forExec) {
            existing.execStarted();
          }
          return new Use(existing, false);
        }
        if (existing != null) {
          table.remove(id);
        }
        table.claim(id);
        stale = existing;
      }
      return startClaimed(spec, forExec, lease.backend(), stale);
    }
  }

  /**
   * Starts the new session {@code spec.session_id} whose private workspace starts as a copy of
   * {@code seed} (null: as the spec says) and whose sandbox starts from the copied writable root
   * {@code root} (null: from its image); never reuses one.
   *
   * @throws BoxSessionConflictException when a session of that id exists or is being started
   */
  Session createNew(BoxSpec spec, WorkspaceStore.@Nullable Seed seed, @Nullable String root) {
    String id = spec.sessionId();
    adoptShared(id);
    try (BackendSlot.Lease lease = slot.lease()) {
      try (KeyedLocks.Held held = table.lockSettled(id)) {
        checkRunning();
        if (table.get(id) != null) {
          throw new BoxSessionConflictException("Box session " + id + " already exists");
        }
        table.claim(id);
      }
      Session session = null;
      try {
        session = sandboxes.start(spec, lease.backend(), seed, root);
        return session;
      } finally {
        table.settle(id, session);
      }
    }
  }

  /**
   * Whether {@code existing} serves {@code spec} as it is; one with other extra mounts or whose
   * sandbox is gone is recreated.
   *
   * @throws BoxSessionConflictException when a compared field differs
   */
  private static boolean reusable(Session existing, BoxSpec spec) {
    String conflict = existing.conflictWith(spec);
    if (conflict != null) {
      throw new BoxSessionConflictException(
          "Box session " + spec.sessionId() + " already exists with " + conflict);
    }
    if (existing.mountsDifferFrom(spec)) {
      log.info("Box session {} extra_mounts changed, recreating", spec.sessionId());
      return false;
    }
    if (!existing.sandbox().isAlive()) {
      log.warn("Box session {} backend disappeared, recreating", spec.sessionId());
      return false;
    }
    return true;
  }

  /**
   * Replaces {@code stale} (if any) with a new sandbox for the claimed id, holding no lock, and
   * settles the claim whatever happens.
   */
  private Use startClaimed(
      BoxSpec spec, boolean forExec, SandboxBackend backend, @Nullable Session stale) {
    Session session = null;
    try {
      if (stale != null) {
        sandboxes.stop(stale, false);
      }
      // A replaced sandbox starts from its image: its writable root went with it.
      session =
          stale == null
              ? sandboxes.create(spec, backend)
              : sandboxes.start(spec, backend, null, null);
      if (forExec) {
        session.execStarted();
      }
      return new Use(session, true);
    } finally {
      table.settle(spec.sessionId(), session);
    }
  }

  /**
   * Starts a recorded persistent session again with its spec and creation time, paused again when
   * it was paused since {@code pausedAt}, unless a session of its id exists already; a failure is
   * logged and the session stays recorded.
   *
   * @return whether it was started
   */
  boolean restore(BoxSpec spec, Instant createdAt, @Nullable Instant pausedAt) {
    try {
      if (takeOver(spec, createdAt, pausedAt)) {
        log.info("restored persistent session {}", spec.sessionId());
        return true;
      }
      return false;
    } catch (RuntimeException e) {
      log.warn(
          "persistent session {} could not be restored now: {}", spec.sessionId(), e.getMessage());
      return false;
    }
  }

  /**
   * Adopts the session {@code id} when this server does not hold it and the backend's {@linkplain
   * SharedSessions shared sessions} record it: another server created it, and this one serves it
   * from now on. Does nothing otherwise.
   *
   * @throws dev.box.api.BoxException when the recorded session's sandbox cannot be reached
   */
  void adoptShared(String id) {
    if (table.get(id) != null) {
      return;
    }
    SharedSessions shared = slot.backend().sharedSessions();
    if (shared == null) {
      return;
    }
    SharedSessions.Entry entry;
    try {
      entry = shared.find(id);
    } catch (BoxException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new BoxRuntimeUnavailableException(
          "the sessions' shared records cannot be read now: " + e.getMessage(), e);
    }
    if (entry != null && takeOver(entry.spec(), entry.createdAt(), null)) {
      log.info("serving session {}, which another server started", id);
    }
  }

  /**
   * Starts the sandbox of a recorded session (the backend adopts it where it still runs), unless a
   * session of its id exists already.
   *
   * @return whether it was started
   */
  private boolean takeOver(BoxSpec spec, Instant createdAt, @Nullable Instant pausedAt) {
    String id = spec.sessionId();
    try (BackendSlot.Lease lease = slot.lease()) {
      try (KeyedLocks.Held held = table.lockSettled(id)) {
        if (table.get(id) != null) {
          return false;
        }
        table.claim(id);
      }
      Session session = null;
      try {
        session = sandboxes.restore(spec, lease.backend(), createdAt, pausedAt);
        return true;
      } finally {
        table.settle(id, session);
      }
    }
  }

  private void checkRunning() {
    if (shuttingDown.getAsBoolean()) {
      throw new BoxRuntimeUnavailableException("Box runtime is shutting down");
    }
  }
}
