package dev.box.core.session;

import dev.box.api.BoxException;
import dev.box.core.backend.SharedSessions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the sessions that have been idle or paused too long, and every session at shutdown (or
 * hands them over to the other servers of a backend that shares them).
 *
 * @param table the live sessions
 * @param sandboxes what stops a session's sandbox
 * @param clock what idleness is measured by
 */
record SessionReaper(SessionTable table, SessionSandboxes sandboxes, Clock clock) {
  private static final Logger log = LoggerFactory.getLogger(SessionReaper.class);
  private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(30);

  /**
   * Deletes every non-persistent session idle for at least {@code ttl} with no exec or managed
   * process running; a paused session is never idle.
   *
   * @return how many sessions were reaped
   */
  int reapIdle(Duration ttl) {
    return reap(session -> isIdle(session, ttl), "idle");
  }

  /**
   * Deletes every non-persistent session paused for at least {@code ttl}.
   *
   * @return how many sessions were reaped
   */
  int reapPaused(Duration ttl) {
    return reap(session -> pausedTooLong(session, ttl), "paused too long");
  }

  /** Deletes every session {@code due} holds of, checked again under its lock. */
  private int reap(Predicate<Session> due, String why) {
    int reaped = 0;
    for (Session candidate : List.copyOf(table.sessions())) {
      if (!due.test(candidate)) {
        continue;
      }
      try (KeyedLocks.Held held = table.lock(candidate.id())) {
        Session current = table.get(candidate.id());
        if (current != candidate || !due.test(current)) {
          continue;
        }
        table.remove(current.id());
        log.info("reaping session {}: {}", current.id(), why);
        sandboxes.stop(current, true);
        reaped++;
      }
    }
    return reaped;
  }

  private boolean pausedTooLong(Session session, Duration ttl) {
    Instant pausedAt = session.pausedAt();
    return !session.persistent()
        && pausedAt != null
        && !pausedAt.plus(ttl).isAfter(clock.instant());
  }

  private boolean isIdle(Session session, Duration ttl) {
    return !session.persistent()
        && session.pausedAt() == null
        && session.activeExecs() == 0
        && !session.hasRunningProcess()
        && !session.lastUsedAt().plus(ttl).isAfter(clock.instant());
  }

  /**
   * Stops every session in parallel, those being started once their start ends, waiting for each at
   * most 30 s; private workspaces of persistent sessions are kept, and so are their sandboxes when
   * {@code keepPersistent} (the backend shares its sessions: the next server serves them).
   */
  void stopAll(boolean keepPersistent) {
    forEachSession(
        session -> {
          if (keepPersistent && session.persistent()) {
            sandboxes.release(session);
          } else {
            sandboxes.stop(session, !session.persistent());
          }
        });
  }

  /**
   * Hands every session over to the other servers of {@code shared}, those being started once their
   * start ends: each is released, not stopped.
   */
  void handOverAll(SharedSessions shared) {
    try {
      shared.handOver(List.copyOf(table.ids()));
    } catch (RuntimeException e) {
      log.warn("could not mark the sessions handed over: {}", e.toString());
    }
    forEachSession(sandboxes::release);
  }

  /** Ends each session with {@code ending}, in parallel, waiting for each at most 30 s. */
  private void forEachSession(Consumer<Session> ending) {
    List<Thread> enders = new ArrayList<>();
    for (String id : table.ids()) {
      enders.add(Thread.ofVirtual().start(() -> end(id, ending)));
    }
    for (Thread ender : enders) {
      try {
        ender.join(SHUTDOWN_WAIT);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private void end(String id, Consumer<Session> ending) {
    try (KeyedLocks.Held held = table.lockSettled(id)) {
      Session session = table.get(id);
      if (session != null) {
        table.remove(id);
        ending.accept(session);
      }
    } catch (BoxException e) {
      log.warn("could not end session {}: {}", id, e.getMessage());
    }
  }
}
