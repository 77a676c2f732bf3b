package dev.box.core.session;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per key, created on demand and dropped when nobody holds or waits for it, so that work
 * on one session id never waits for work on another.
 */
final class KeyedLocks {
  private static final class Entry {
    final ReentrantLock lock = new ReentrantLock();
    int users;
  }

  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

  /** Locks {@code key}; the returned handle unlocks it. */
  Held lock(String key) {
    Entry entry =
        entries.compute(
            key,
            (k, e) -> {
              Entry held = e == null ? new Entry() : e;
              held.users++;
              return held;
            });
    entry.lock.lock();
    return () -> {
      entry.lock.unlock();
      entries.computeIfPresent(key, (k, e) -> --e.users == 0 ? null : e);
    };
  }

  /** A held lock. */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }
}
