package dev.box.core.session;

import dev.box.api.BoxBackendUnavailableException;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.SandboxBackend;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backend in use and LangBot's switch to another one.
 *
 * <p>Work that creates or reuses a session holds a {@link Lease} on the backend: a counter, not a
 * lock, so a start may take minutes (an image pull) without blocking anyone. A switch never waits
 * for leases: while one is held it answers {@link SessionManager.Switch#BUSY}, so the backend is
 * never closed under a start. While a switch runs (closing the old backend, opening and cleaning
 * the new one, all outside the lock) new leases wait for it, at most {@code switchWait}.
 */
final class BackendSlot {
  private static final Logger log = LoggerFactory.getLogger(BackendSlot.class);

  private final Duration switchWait;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition switched = lock.newCondition();
  private volatile BackendChoice choice;
  private volatile BackendChoice.@Nullable Selector selector;
  // Guarded by lock.
  private int leases;
  private boolean switching;

  /**
   * @param choice the backend to start with
   * @param switchWait how long a lease or a second switch waits for a switch in progress
   */
  BackendSlot(BackendChoice choice, Duration switchWait) {
    this.choice = choice;
    this.switchWait = switchWait;
  }

  /** The backend in use. */
  SandboxBackend backend() {
    return choice.backend();
  }

  /** The backend in use and how it was chosen. */
  BackendChoice choice() {
    return choice;
  }

  /** Lets {@link #switchTo} replace the backend with what {@code select} chooses. */
  void allowSwitch(BackendChoice.Selector select) {
    this.selector = select;
  }

  /** A hold on the backend in use: it is not switched or closed until the lease is closed. */
  interface Lease extends AutoCloseable {
    /** The backend held. */
    SandboxBackend backend();

    @Override
    void close();
  }

  /**
   * Holds the backend in use, after a switch in progress has ended.
   *
   * @throws BoxBackendUnavailableException when a switch is still running after the wait
   */
  Lease lease() {
    lock.lock();
    try {
      if (!awaitNoSwitch()) {
        throw new BoxBackendUnavailableException(
            "Box backend is being switched; try again in a moment");
      }
      leases++;
      SandboxBackend held = choice.backend();
      return new Lease() {
        private boolean closed;

        @Override
        public SandboxBackend backend() {
          return held;
        }

        @Override
        public void close() {
          if (!closed) {
            closed = true;
            release();
          }
        }
      };
    } finally {
      lock.unlock();
    }
  }

  private void release() {
    lock.lock();
    try {
      leases--;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Replaces the backend with the one {@code name} selects, unless it is already that one, no
   * selector was allowed, or the backend is in use: a lease is held or {@code inUse} says so.
   */
  SessionManager.Switch switchTo(String name, BooleanSupplier inUse) {
    BackendChoice.Selector select = selector;
    if (select == null) {
      return SessionManager.Switch.FIXED;
    }
    SandboxBackend old;
    lock.lock();
    try {
      if (!awaitNoSwitch()) {
        return SessionManager.Switch.BUSY;
      }
      if (name.equals(choice.requested()) || name.equals(choice.backend().name())) {
        return SessionManager.Switch.DONE;
      }
      if (leases > 0 || inUse.getAsBoolean()) {
        return SessionManager.Switch.BUSY;
      }
      switching = true;
      old = choice.backend();
    } finally {
      lock.unlock();
    }
    replace(old, select, name);
    return SessionManager.Switch.DONE;
  }

  /** Closes {@code old} and opens the next backend, outside the lock; leases wait meanwhile. */
  private void replace(SandboxBackend old, BackendChoice.Selector select, String name) {
    try {
      // Closed first: no session runs on it, and a new backend of the same kind may reuse what
      // this one would remove on close (bubblewrap's cgroup base).
      old.close();
      BackendChoice next = select.select(name);
      choice = next;
      next.backend().removeOrphans();
      log.info("backend is now {} ({}): box.backend={}", next.backend().name(), next.why(), name);
    } finally {
      lock.lock();
      try {
        switching = false;
        switched.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  /** Waits, holding the lock, until no switch runs; false when one still runs after the wait. */
  private boolean awaitNoSwitch() {
    long left = switchWait.toNanos();
    try {
      while (switching) {
        if (left <= 0) {
          return false;
        }
        left = switched.awaitNanos(left);
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !switching;
    }
  }
}
