package dev.box.e2b.server;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The directory watches of one sandbox: at most {@link #MAX_WATCHES} at once, streamed ({@code
 * WatchDir}) and polled ({@code CreateWatcher}) together, {@code resource_exhausted} beyond; and
 * the polled ones by their id. Thread-safe.
 */
final class WatchTable {
  /** The most watches of one sandbox at once. */
  static final int MAX_WATCHES = 16;

  /** Starts a watch that calls the given {@code onClose} once closed. */
  interface Starter {
    DirWatch start(Runnable onClose) throws InterruptedException;
  }

  private final Map<String, DirWatch> polled = new ConcurrentHashMap<>();
  private int open;

  /**
   * Starts a watch with {@code starter}, counted until it is closed (or failed to start).
   *
   * @throws ConnectError {@code resource_exhausted} when {@link #MAX_WATCHES} are open already
   */
  DirWatch open(Starter starter) throws InterruptedException {
    synchronized (this) {
      if (open >= MAX_WATCHES) {
        throw new ConnectError(
            "resource_exhausted",
            "the sandbox has " + MAX_WATCHES + " directory watches already, the most Box allows");
      }
      open++;
    }
    AtomicBoolean counted = new AtomicBoolean(true);
    Runnable closed =
        () -> {
          if (counted.getAndSet(false)) {
            synchronized (this) {
              open--;
            }
          }
        };
    try {
      return starter.start(closed);
    } catch (RuntimeException | InterruptedException e) {
      closed.run();
      throw e;
    }
  }

  /** Keeps {@code watch} for polling and returns its new id. */
  String keep(DirWatch watch) {
    String id = Secrets.sandboxId();
    polled.put(id, watch);
    return id;
  }

  /**
   * The polled watch {@code id}.
   *
   * @throws ConnectError {@code not_found} when there is none
   */
  DirWatch find(String id) {
    DirWatch watch = polled.get(id);
    if (watch == null) {
      throw ConnectError.notFound("no watcher " + id);
    }
    return watch;
  }

  /**
   * Forgets and closes the polled watch {@code id}.
   *
   * @throws ConnectError {@code not_found} when there is none
   */
  void remove(String id) {
    DirWatch watch = polled.remove(id);
    if (watch == null) {
      throw ConnectError.notFound("no watcher " + id);
    }
    watch.close();
  }
}
