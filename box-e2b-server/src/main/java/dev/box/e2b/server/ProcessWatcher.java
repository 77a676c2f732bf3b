package dev.box.e2b.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * What one stream of a process ({@code Start} or {@code Connect}) has yet to send: at most {@link
 * #CAPACITY} output events, then the process's end. A process whose watchers do not keep up waits
 * for them (its output pipe fills and it blocks, as it would on a terminal), so memory stays
 * bounded; a watcher whose stream is gone is {@linkplain #close closed} and waits for nothing.
 */
final class ProcessWatcher {
  /** The most output events queued: with reads of 32 KiB, about 1 MiB of JSON. */
  static final int CAPACITY = 24;

  /** The next thing to send: an output event, or the end. */
  sealed interface Next {}

  /** An output event to send. */
  record Output(ObjectNode event) implements Next {}

  /**
   * The process ended: its end event, then the end of the stream with {@code error} when the
   * process ran out of time.
   */
  record Ended(ObjectNode event, @Nullable ConnectError error) implements Next {}

  private final ArrayDeque<ObjectNode> queue = new ArrayDeque<>();
  private @Nullable Ended ended;
  private boolean closed;

  /** Queues {@code event}, waiting while the queue is full; dropped once closed or ended. */
  synchronized void deliver(ObjectNode event) throws InterruptedException {
    while (queue.size() >= CAPACITY && !closed && ended == null) {
      wait();
    }
    if (closed || ended != null) {
      return;
    }
    queue.add(event);
    notifyAll();
  }

  /** The process ended: {@code end} follows what is queued. */
  synchronized void finish(Ended end) {
    ended = end;
    notifyAll();
  }

  /** The stream is done: nothing more is queued, and nobody waits for it. */
  synchronized void close() {
    closed = true;
    queue.clear();
    notifyAll();
  }

  /**
   * The next thing to send, waiting up to {@code timeoutNanos}; null when nothing came meanwhile.
   */
  synchronized @Nullable Next next(long timeoutNanos) throws InterruptedException {
    if (!Monitors.await(this, () -> !queue.isEmpty() || ended != null, timeoutNanos)) {
      return null;
    }
    ObjectNode event = queue.poll();
    if (event != null) {
      notifyAll();
      return new Output(event);
    }
    return ended;
  }
}
