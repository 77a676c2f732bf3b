package dev.box.client;

import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessConflictException;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.internal.RelayProtocol;
import dev.box.api.time.Ticker;
import java.io.IOException;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * An attachment that survives dropped connections: it always asks for raw stdout, so it knows the
 * byte offset after the last byte it delivered, and when a connection drops it reconnects with
 * {@code from=} that offset. Nothing is delivered twice and nothing is skipped unless the server
 * says it no longer has the bytes ({@link ProcessListener#onGap}).
 *
 * <p>Frames of the current connection arrive on the JDK's threads; reconnecting and the idle check
 * run on one supervisor virtual thread. Every listener call and every change of the current
 * connection or the offset happens under {@link #dispatch}, so the offset a reconnect asks for is
 * exactly the offset after the last byte the listener saw. That lock is also why this state machine
 * is one class: the connection, the offset and the listener calls change together.
 *
 * <p>The idle check reads the client's {@link Ticker}, and the backoff between reconnect attempts
 * waits on its {@link Sleeper}.
 */
final class RelayAttachment implements ProcessAttachment {
  private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);
  private static final Duration MAX_CHECK_PERIOD = Duration.ofSeconds(1);

  /** Why the supervisor should reconnect; {@code immediate} skips the first backoff. */
  private record Drop(Throwable cause, boolean immediate) {}

  /** Wakes the supervisor when the attachment ended. */
  private static final Drop ENDED = new Drop(new IOException("ended"), true);

  /** The managed process attached to, named as messages name it. */
  private record Target(String sessionId, String processId) {
    @Override
    public String toString() {
      return "managed process " + processId + " in session " + sessionId;
    }
  }

  private final BoxClient client;
  private final Target target;
  private final ProcessListener listener;
  private final AttachOptions options;
  private final StdoutDecoder stdout;
  private final Outbox outbox;
  private final ReentrantLock dispatch = new ReentrantLock();
  private final LinkedBlockingQueue<Drop> drops = new LinkedBlockingQueue<>();
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile boolean detaching;
  private volatile long lastReceived; // Set by connect(), before the supervisor first reads it.
  private long offset = -1;
  private int attemptsSinceStart;
  private @Nullable RelayConnection current;

  private RelayAttachment(
      BoxClient client, Target target, ProcessListener listener, AttachOptions options) {
    this.client = client;
    this.target = target;
    this.listener = listener;
    this.options = options;
    this.stdout = new StdoutDecoder(listener, options);
    this.outbox = new Outbox("box-relay-send-" + target.processId(), this::writeFailed);
  }

  /** Connects, and returns once the server accepted the connection. */
  static RelayAttachment open(
      BoxClient client,
      String sessionId,
      String processId,
      ProcessListener listener,
      AttachOptions options) {
    RelayAttachment attachment =
        new RelayAttachment(client, new Target(sessionId, processId), listener, options);
    client.opened(attachment);
    try {
      attachment.connect(options.from(), false);
    } catch (RuntimeException e) {
      attachment.ended.set(true);
      attachment.outbox.shutdown(e);
      client.ended(attachment);
      throw e;
    }
    Thread.ofVirtual().name("box-relay-" + processId).start(attachment::supervise);
    return attachment;
  }

  @Override
  public String sessionId() {
    return target.sessionId();
  }

  @Override
  public String processId() {
    return target.processId();
  }

  @Override
  public CompletableFuture<Void> send(String line) {
    for (char refused : new char[] {'\n', '\r'}) {
      if (line.indexOf(refused) >= 0) {
        throw new IllegalArgumentException(
            "a stdin line must not contain "
                + (refused == '\n' ? "\\n" : "\\r")
                + ": send each line on its own, or bytes with sendBytes");
      }
    }
    return outbox.text(line);
  }

  @Override
  public CompletableFuture<Void> sendBytes(byte[] bytes) {
    if (bytes.length == 0) {
      // An empty binary frame would close stdin.
      return CompletableFuture.completedFuture(null);
    }
    return outbox.binary(bytes.clone());
  }

  @Override
  public CompletableFuture<Void> closeStdin() {
    return outbox.binary(new byte[0]);
  }

  @Override
  public long offset() {
    dispatch.lock();
    try {
      return offset;
    } finally {
      dispatch.unlock();
    }
  }

  @Override
  public void close() {
    if (ended.get()) {
      return;
    }
    detaching = true;
    CompletableFuture<Void> closeSent = outbox.closeFrame(RelayProtocol.NORMAL_CLOSURE, "detached");
    try {
      closeSent.get(client.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // The connection is gone or stuck: it is aborted below either way.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    end(() -> listener.onClose(RelayProtocol.NORMAL_CLOSURE, "detached"), true);
  }

  // ---- Events of a connection, on the JDK's threads.

  /** Any frame arrived: the connection is alive. */
  void received() {
    lastReceived = client.ticker().read();
  }

  void onStart(RelayConnection conn, long start) {
    dispatchFrom(
        conn,
        () -> {
          attemptsSinceStart = 0;
          offset = start;
          if (conn.isReconnect()) {
            listener.onReconnect(start);
          }
        });
  }

  void onStdout(RelayConnection conn, byte[] bytes) {
    dispatchFrom(
        conn,
        () -> {
          if (offset < 0) {
            throw new IOException("the relay sent stdout before saying at which offset it starts");
          }
          long at = offset;
          offset += bytes.length;
          stdout.accept(bytes, at);
        });
  }

  void onServerClose(RelayConnection conn, int code, String reason) {
    if (detaching) {
      return; // The server's answer to close(), which ends the attachment itself.
    }
    dispatchFrom(
        conn,
        () -> {
          switch (code) {
            case RelayProtocol.NORMAL_CLOSURE -> {
              stdout.finish();
              Integer exitCode = RelayProtocol.exitCode(reason);
              if (exitCode != null) {
                listener.onExit(exitCode);
              }
              end(() -> listener.onClose(code, reason), false);
            }
            case RelayProtocol.OFFSET_GONE -> offsetGone(conn, code, reason);
            case RelayProtocol.ABNORMAL_CLOSURE ->
                lose(conn, new IOException("the connection ended without a close frame"), false);
            default -> {
              BoxException failure = RelayProtocol.failure(code, reason);
              if (failure != null) {
                fail(failure);
              } else {
                end(() -> listener.onClose(code, reason), false);
              }
            }
          }
        });
  }

  void connectionLost(RelayConnection conn, Throwable error) {
    dispatchFrom(conn, () -> lose(conn, error, false));
  }

  /**
   * A frame could not be written on {@code ws}. Handled on its own thread: the outbox thread must
   * not wait for the dispatch lock, which a listener calling {@link #close()} holds while it waits
   * for the outbox.
   */
  @SuppressWarnings("ReferenceEquality") // The same connection, not an equal one.
  private void writeFailed(WebSocket ws, Throwable error) {
    Thread.ofVirtual()
        .start(
            () -> {
              dispatch.lock();
              try {
                RelayConnection conn = current;
                if (conn != null && conn.socket() == ws) {
                  lose(conn, error, false);
                }
              } finally {
                dispatch.unlock();
              }
            });
  }

  private void offsetGone(RelayConnection conn, int code, String reason) {
    Long first = RelayProtocol.firstAvailable(reason);
    if (first == null) {
      end(() -> listener.onClose(code, reason), false);
      return;
    }
    Long requested = conn.from();
    listener.onGap(requested != null ? requested : offset, first);
    stdout.reset();
    offset = first;
    if (options.reconnectAttempts() == 0) {
      end(() -> listener.onClose(code, reason), false);
    } else {
      lose(conn, new IOException(reason), true);
    }
  }

  /** Under {@link #dispatch}: {@code conn} is dead; the supervisor replaces it. */
  private void lose(RelayConnection conn, Throwable cause, boolean immediate) {
    if (current != conn) {
      return;
    }
    current = null;
    outbox.disconnected();
    conn.abort();
    drops.offer(new Drop(cause, immediate));
  }

  /** Runs {@code action} under the dispatch lock if {@code conn} is still the current one. */
  private void dispatchFrom(RelayConnection conn, Action action) {
    dispatch.lock();
    try {
      if (current == conn && !ended.get()) {
        action.run();
      }
    } catch (Exception e) {
      fail(e);
    } finally {
      dispatch.unlock();
    }
  }

  /** A listener call or another step that may throw. */
  private interface Action {
    void run() throws Exception;
  }

  // ---- The supervisor: reconnects and idle checks, on one virtual thread.

  private void supervise() {
    Duration idle = options.idleTimeout();
    long period =
        idle.isZero()
            ? MAX_CHECK_PERIOD.toMillis()
            : Math.clamp(idle.toMillis() / 4, 10, MAX_CHECK_PERIOD.toMillis());
    try {
      while (!ended.get()) {
        Drop drop = drops.poll(period, TimeUnit.MILLISECONDS);
        if (ended.get()) {
          return;
        } else if (drop != null) {
          reconnect(drop);
        } else if (!idle.isZero() && client.ticker().read() - lastReceived > idle.toNanos()) {
          dispatch.lock();
          try {
            RelayConnection conn = current;
            if (conn != null) {
              lose(conn, new IOException("no frame from the server for " + idle), false);
            }
          } finally {
            dispatch.unlock();
          }
        }
      }
    } catch (InterruptedException e) {
      fail(e);
    }
  }

  private void reconnect(Drop drop) throws InterruptedException {
    int attempts = options.reconnectAttempts();
    Throwable last = drop.cause();
    boolean wait = !drop.immediate();
    while (!ended.get()) {
      long from;
      int attempt;
      dispatch.lock();
      try {
        if (attemptsSinceStart >= attempts) {
          break;
        }
        attempt = ++attemptsSinceStart;
        from = offset;
      } finally {
        dispatch.unlock();
      }
      if (wait) {
        client.sleeper().sleep(backoff(attempt));
      }
      wait = true;
      try {
        connect(from >= 0 ? from : null, true);
        return;
      } catch (BoxManagedProcessConflictException e) {
        finishExited();
        return;
      } catch (BoxRuntimeUnavailableException e) {
        last = e;
      } catch (RuntimeException e) {
        fail(e);
        return;
      }
    }
    fail(
        new BoxRuntimeUnavailableException(
            "lost the relay of "
                + target
                + (attempts == 0
                    ? " (reconnecting is off): "
                    : " and could not reconnect in " + attempts + " attempts: ")
                + last,
            last));
  }

  private static Duration backoff(int attempt) {
    Duration delay = FIRST_BACKOFF.multipliedBy(1L << Math.min(attempt - 1, 10));
    return delay.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : delay;
  }

  private void connect(@Nullable Long from, boolean reconnect) {
    RelayConnection conn = new RelayConnection(this, from, reconnect);
    dispatch.lock();
    try {
      if (ended.get()) {
        return;
      }
      current = conn;
    } finally {
      dispatch.unlock();
    }
    WebSocket ws;
    try {
      ws =
          client
              .http()
              .openWebSocket(
                  Routes.process(target.sessionId(), target.processId())
                      + "/ws?mode=raw"
                      + (from == null ? "" : "&from=" + from),
                  conn);
    } catch (RuntimeException e) {
      dispatch.lock();
      try {
        if (current == conn) {
          current = null;
        }
      } finally {
        dispatch.unlock();
      }
      throw e;
    }
    lastReceived = client.ticker().read();
    dispatch.lock();
    try {
      if (current == conn) {
        outbox.connected(ws);
      } else {
        ws.abort(); // Ended, or dropped already (then a reconnect is under way).
      }
    } finally {
      dispatch.unlock();
    }
  }

  /**
   * The server refuses to relay a process that exited after delivering all of its stdout. The
   * delivery it counts may include bytes a dropped connection never brought here: those are
   * reported as a gap, and the exit code is taken from the process's record.
   */
  private void finishExited() {
    BoxManagedProcessInfo info;
    try {
      info = client.process(target.sessionId(), target.processId());
    } catch (BoxException e) {
      fail(e);
      return;
    }
    dispatch.lock();
    try {
      if (ended.get()) {
        return;
      }
      if (offset >= 0 && info.stdoutOffset() > offset) {
        listener.onGap(offset, info.stdoutOffset());
        offset = info.stdoutOffset();
      } else {
        stdout.finish();
      }
      Integer exitCode = info.exitCode();
      if (exitCode != null) {
        listener.onExit(exitCode);
      }
      String reason =
          exitCode != null ? RelayProtocol.exitReason(exitCode) : RelayProtocol.STDOUT_CLOSED;
      end(() -> listener.onClose(RelayProtocol.NORMAL_CLOSURE, reason), true);
    } catch (RuntimeException e) {
      fail(e);
    } finally {
      dispatch.unlock();
    }
  }

  private void fail(Throwable failure) {
    end(() -> listener.onFailure(failure), true);
  }

  /** Ends the attachment once: stops sending and reconnecting, then makes the last call. */
  private void end(Runnable lastCall, boolean abort) {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    dispatch.lock();
    try {
      RelayConnection conn = current;
      current = null;
      if (conn != null && abort) {
        conn.abort();
      }
      outbox.shutdown(new IllegalStateException("the attachment to " + target + " has ended"));
      drops.offer(ENDED);
      client.ended(this);
      try {
        lastCall.run();
      } catch (RuntimeException e) {
        // The listener failed in its last call: there is no one left to tell.
      }
    } finally {
      dispatch.unlock();
    }
  }
}
