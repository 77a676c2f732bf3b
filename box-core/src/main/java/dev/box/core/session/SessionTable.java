package dev.box.core.session;

import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.time.Ticker;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The sessions by id, the starts in progress, the per-id locks and the capacity they share.
 *
 * <p>A sandbox is started without any lock held: under the id's lock a request {@linkplain #claim
 * claims} the id, starts the sandbox unlocked, and {@linkplain #settle settles} the claim under the
 * lock again. Whoever needs the id meanwhile takes {@link #lockSettled}, which waits (bounded) for
 * the start to settle, so one id never gets two sandboxes and work on one id stays ordered. The
 * capacity counts sessions and starts in progress alike.
 */
final class SessionTable {
  private final ConcurrentHashMap<String, Session> sessions = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, CountDownLatch> starting = new ConcurrentHashMap<>();
  private final KeyedLocks locks = new KeyedLocks();
  private final AtomicInteger occupied = new AtomicInteger();
  private final Duration startWait;
  private final Ticker ticker;

  /**
   * @param startWait how long {@link #lockSettled} waits for a start in progress
   * @param ticker measures that wait
   */
  SessionTable(Duration startWait, Ticker ticker) {
    this.startWait = startWait;
    this.ticker = ticker;
  }

  /** Locks {@code id} at once, whether or not a start of it is in progress. */
  KeyedLocks.Held lock(String id) {
    return locks.lock(id);
  }

  /**
   * Locks {@code id} once no start of it is in progress.
   *
   * @throws BoxRuntimeUnavailableException when a start is still in progress after the wait
   */
  KeyedLocks.Held lockSettled(String id) {
    long deadline = ticker.read() + startWait.toNanos();
    while (true) {
      KeyedLocks.Held held = locks.lock(id);
      CountDownLatch start = starting.get(id);
      if (start == null) {
        return held;
      }
      held.close();
      if (!awaitUntil(start, deadline)) {
        throw new BoxRuntimeUnavailableException(
            "Box session " + id + " is still starting; try again later");
      }
    }
  }

  private boolean awaitUntil(CountDownLatch latch, long deadline) {
    try {
      return latch.await(deadline - ticker.read(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BoxRuntimeUnavailableException("interrupted while a session was starting");
    }
  }

  /** Marks a start of {@code id} in progress; the caller holds the id's lock and settles it. */
  void claim(String id) {
    starting.put(id, new CountDownLatch(1));
  }

  /**
   * Ends the start of {@code id}, publishing {@code session} unless it is null (the start failed),
   * and lets those who wait for it go on.
   */
  void settle(String id, @Nullable Session session) {
    CountDownLatch start;
    try (KeyedLocks.Held held = locks.lock(id)) {
      if (session != null) {
        sessions.put(id, session);
      }
      start = starting.remove(id);
    }
    if (start != null) {
      start.countDown();
    }
  }

  @Nullable Session get(String id) {
    return sessions.get(id);
  }

  void remove(String id) {
    sessions.remove(id);
  }

  Collection<Session> sessions() {
    return sessions.values();
  }

  int size() {
    return sessions.size();
  }

  /** The ids of every session and of every start in progress. */
  Set<String> ids() {
    Set<String> ids = new LinkedHashSet<>(sessions.keySet());
    ids.addAll(starting.keySet());
    return ids;
  }

  /** Whether a session exists, or one is being started or stopped. */
  boolean inUse() {
    return !sessions.isEmpty() || !starting.isEmpty() || occupied.get() > 0;
  }

  /**
   * Takes one unit of capacity for a new session.
   *
   * @throws BoxCapacityExceededException when {@code max} are taken
   */
  void reserve(int max) {
    while (true) {
      int current = occupied.get();
      if (current >= max) {
        throw new BoxCapacityExceededException("Box session capacity reached (" + max + ")");
      }
      if (occupied.compareAndSet(current, current + 1)) {
        return;
      }
    }
  }

  /** Gives back one unit of capacity. */
  void release() {
    occupied.decrementAndGet();
  }
}
