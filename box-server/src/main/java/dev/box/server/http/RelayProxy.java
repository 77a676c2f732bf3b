package dev.box.server.http;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.internal.RelayProtocol;
import java.net.URI;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's relay WebSocket proxied, frame by frame, to the replica that holds the managed process
 * (the upstream), which relays it as it relays its own clients ({@link Relay}).
 *
 * <p>One frame at a time each way: the next upstream frame is asked for once the client has taken
 * the last one, and a client frame is handed on before the next is read, so a slow end holds the
 * other back rather than filling a buffer. Nothing is read upstream before the client is attached.
 * When either end closes, the other is closed with the same code and reason.
 */
final class RelayProxy implements RelayEnd, WebSocket.Listener {
  private static final Logger log = LoggerFactory.getLogger(RelayProxy.class);

  /** How long opening the upstream may take. */
  private static final Duration OPEN_TIMEOUT = Duration.ofSeconds(10);

  /** How long the upstream may take to accept a client's frame before the relay is given up. */
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(60);

  /** The upstream's close without a status ({@code 1005}), which no close frame may carry. */
  private static final int NO_STATUS = 1005;

  private final CompletableFuture<Session> client = new CompletableFuture<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private @Nullable WebSocket upstream;

  private RelayProxy() {}

  /**
   * Opens the upstream WebSocket at {@code uri}, before the client's upgrade, so that a refusal
   * there (a bad offset, an exited process) is this upgrade's refusal.
   *
   * @throws Refused when the upstream refuses the upgrade, with its status and body
   * @throws BoxException ({@code runtime_unavailable}) when it cannot be reached
   */
  static RelayProxy open(Peers peers, URI uri) {
    RelayProxy proxy = new RelayProxy();
    try {
      proxy.upstream =
          peers
              .webSocket()
              .buildAsync(uri, proxy)
              .get(OPEN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return proxy;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw unreachable(uri, e);
    } catch (TimeoutException e) {
      throw unreachable(uri, e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException refused) {
        Object body = refused.getResponse().body();
        throw new Refused(refused.getResponse().statusCode(), body == null ? "" : body.toString());
      }
      throw unreachable(uri, e.getCause() == null ? e : e.getCause());
    }
  }

  private static BoxException unreachable(URI uri, Throwable cause) {
    return new BoxException(
        BoxErrorCode.RUNTIME_UNAVAILABLE,
        "the replica that holds the managed process ("
            + uri.getRawAuthority()
            + ") does not answer: "
            + cause);
  }

  /** The upstream refused the upgrade: its status and JSON body, to answer the client with. */
  static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String body;

    Refused(int status, String body) {
      super("refused with " + status, null, false, false);
      this.status = status;
      this.body = body;
    }

    int status() {
      return status;
    }

    String body() {
      return body;
    }
  }

  /** Attaches the client's socket, and starts relaying. */
  void attach(Session socket) {
    client.complete(socket);
    upstream().request(1);
  }

  /**
   * Gives up the relay: aborts the upstream (the process stays attachable there) and closes the
   * client's socket, when one is attached: an upgrade that did not complete, or an end that failed.
   */
  void abandon() {
    if (closed.compareAndSet(false, true)) {
      upstream().abort();
      closeClient(RelayProtocol.INTERNAL_ERROR, "the relay of the replica that holds it failed");
    }
  }

  private void closeClient(int code, String reason) {
    Session socket = client.getNow(null);
    if (socket != null && socket.isOpen()) {
      socket.close(code, reason, Callback.NOOP);
    }
  }

  private WebSocket upstream() {
    WebSocket socket = upstream;
    if (socket == null) {
      throw new IllegalStateException("the upstream is not open");
    }
    return socket;
  }

  @Override
  public void onOpen(WebSocket webSocket) {
    // Nothing is asked for until the client is attached.
  }

  @Override
  public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
    Callback.Completable sent = new Callback.Completable();
    client.join().sendPartialText(data.toString(), last, sent);
    return next(webSocket, sent);
  }

  @Override
  public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
    Callback.Completable sent = new Callback.Completable();
    client.join().sendPartialBinary(data, last, sent);
    return next(webSocket, sent);
  }

  /** Asks for the next upstream frame once the client has taken this one. */
  private CompletionStage<?> next(WebSocket webSocket, Callback.Completable sent) {
    return sent.whenComplete(
        (ok, failure) -> {
          if (failure == null) {
            webSocket.request(1);
          } else {
            abandon();
          }
        });
  }

  @Override
  public @Nullable CompletionStage<?> onClose(WebSocket webSocket, int code, String reason) {
    closed.set(true);
    closeClient(code == NO_STATUS ? RelayProtocol.NORMAL_CLOSURE : code, reason);
    return null;
  }

  @Override
  public void onError(WebSocket webSocket, Throwable error) {
    closed.set(true);
    log.debug("the upstream relay failed: {}", error.toString());
    closeClient(RelayProtocol.INTERNAL_ERROR, "the replica that holds the process went away");
  }

  @Override
  public void onText(String text) {
    forward(upstream().sendText(text, true));
  }

  @Override
  public void onBinary(byte[] bytes) {
    forward(upstream().sendBinary(ByteBuffer.wrap(bytes), true));
  }

  /** Waits until the upstream has taken a client frame, so that the next is read after it. */
  private void forward(CompletableFuture<WebSocket> sent) {
    try {
      sent.get(SEND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abandon();
    } catch (TimeoutException e) {
      log.debug("the upstream took no frame for {}: the relay is given up", SEND_TIMEOUT);
      abandon();
    } catch (ExecutionException e) {
      log.debug("cannot relay to the upstream: {}", String.valueOf(e.getCause()));
      abandon();
    }
  }

  /** The client went away: the upstream is closed, and the process keeps running there. */
  @Override
  public void stop() {
    if (closed.compareAndSet(false, true)) {
      upstream()
          .sendClose(RelayProtocol.NORMAL_CLOSURE, "")
          .whenComplete(
              (ok, failure) -> {
                if (failure != null) {
                  upstream().abort();
                }
              });
    }
  }
}
