package dev.box.client;

import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The frames an attachment sends, in order, one at a time, on whichever connection is current.
 *
 * <p>The JDK WebSocket refuses a send while the previous one is pending, so one virtual thread
 * takes frames from a queue and waits for each to be written. While there is no connection it waits
 * for the next. A frame whose write fails is reported and not sent again.
 */
final class Outbox {
  private static final Duration POLL = Duration.ofSeconds(1);

  private final LinkedBlockingQueue<Frame> queue = new LinkedBlockingQueue<>();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final BiConsumer<WebSocket, Throwable> onWriteFailure;
  private @Nullable WebSocket socket;
  private @Nullable Throwable shutdown;

  /** A frame and the future its caller holds. */
  private record Frame(
      Function<WebSocket, CompletableFuture<WebSocket>> write,
      boolean needsConnection,
      CompletableFuture<Void> done) {}

  /**
   * @param onWriteFailure told which connection failed a write, so it can be replaced
   */
  Outbox(String name, BiConsumer<WebSocket, Throwable> onWriteFailure) {
    this.onWriteFailure = onWriteFailure;
    Thread.ofVirtual().name(name).start(this::run);
  }

  CompletableFuture<Void> text(String text) {
    return enqueue(ws -> ws.sendText(text, true), true);
  }

  CompletableFuture<Void> binary(byte[] bytes) {
    return enqueue(ws -> ws.sendBinary(ByteBuffer.wrap(bytes), true), true);
  }

  /** A close frame after the queued frames; completes at once when there is no connection. */
  CompletableFuture<Void> closeFrame(int code, String reason) {
    return enqueue(ws -> ws.sendClose(code, reason), false);
  }

  /** Frames are written on {@code ws} from now on. */
  void connected(WebSocket ws) {
    setSocket(ws);
  }

  /** The connection is gone; frames wait for the next. */
  void disconnected() {
    setSocket(null);
  }

  /** Fails every queued and later frame with {@code reason}, and stops the thread. */
  void shutdown(Throwable reason) {
    lock.lock();
    try {
      if (shutdown == null) {
        shutdown = reason;
      }
      socket = null;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    failQueued(reason);
    // Wakes the thread if it waits for a frame.
    queue.offer(new Frame(CompletableFuture::completedFuture, false, new CompletableFuture<>()));
  }

  private void failQueued(Throwable reason) {
    List<Frame> left = new ArrayList<>();
    queue.drainTo(left);
    left.forEach(f -> f.done().completeExceptionally(reason));
  }

  private CompletableFuture<Void> enqueue(
      Function<WebSocket, CompletableFuture<WebSocket>> write, boolean needsConnection) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Throwable reason = shutdownReason();
    if (reason != null) {
      done.completeExceptionally(reason);
      return done;
    }
    Frame frame = new Frame(write, needsConnection, done);
    queue.offer(frame);
    reason = shutdownReason();
    if (reason != null && queue.remove(frame)) {
      // Shut down meanwhile: the thread may be gone already.
      done.completeExceptionally(reason);
    }
    return done;
  }

  private void setSocket(@Nullable WebSocket ws) {
    lock.lock();
    try {
      if (shutdown == null) {
        socket = ws;
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  private @Nullable Throwable shutdownReason() {
    lock.lock();
    try {
      return shutdown;
    } finally {
      lock.unlock();
    }
  }

  private void run() {
    try {
      while (true) {
        Frame frame = queue.take();
        Throwable reason = shutdownReason();
        if (reason != null) {
          frame.done().completeExceptionally(reason);
          failQueued(reason);
          return;
        }
        write(frame);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void write(Frame frame) throws InterruptedException {
    WebSocket ws = awaitSocket(frame.needsConnection());
    if (ws == null) {
      Throwable reason = shutdownReason();
      if (reason != null) {
        frame.done().completeExceptionally(reason);
      } else {
        frame.done().complete(null);
      }
      return;
    }
    try {
      frame.write().apply(ws).get();
      frame.done().complete(null);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      frame.done().completeExceptionally(cause);
      onWriteFailure.accept(ws, cause);
    } catch (RuntimeException e) {
      // The JDK throws IllegalStateException when the output is already closed.
      frame.done().completeExceptionally(e);
      onWriteFailure.accept(ws, e);
    }
  }

  /** The current connection, waiting for one when {@code wait}; null when shut down or absent. */
  private @Nullable WebSocket awaitSocket(boolean wait) throws InterruptedException {
    lock.lock();
    try {
      while (wait && socket == null && shutdown == null) {
        changed.await(POLL.toMillis(), TimeUnit.MILLISECONDS);
      }
      return socket;
    } finally {
      lock.unlock();
    }
  }
}
