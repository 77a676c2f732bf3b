package dev.box.client;

import dev.box.api.internal.RelayProtocol;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * One WebSocket connection of an attachment: joins the parts the JDK delivers into frames, asks for
 * the next frame only after the attachment handled the last one, and passes each frame on tagged
 * with this connection, so that frames of a connection already replaced are ignored.
 */
final class RelayConnection implements WebSocket.Listener {
  private final RelayAttachment owner;
  private final @Nullable Long from;
  private final boolean reconnect;
  private final StringBuilder text = new StringBuilder();
  private volatile @Nullable WebSocket socket;

  /**
   * @param from the offset requested with {@code from=}, or null for the server's
   * @param reconnect whether this connection replaces one that dropped
   */
  RelayConnection(RelayAttachment owner, @Nullable Long from, boolean reconnect) {
    this.owner = owner;
    this.from = from;
    this.reconnect = reconnect;
  }

  @Nullable Long from() {
    return from;
  }

  boolean isReconnect() {
    return reconnect;
  }

  @Nullable WebSocket socket() {
    return socket;
  }

  /** Closes the connection at once, without a close frame. */
  void abort() {
    WebSocket ws = socket;
    if (ws != null) {
      ws.abort();
    }
  }

  @Override
  public void onOpen(WebSocket ws) {
    socket = ws;
    owner.received();
    ws.request(1);
  }

  @Override
  public @Nullable CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
    owner.received();
    text.append(data);
    if (last) {
      String message = text.toString();
      text.setLength(0);
      Long start = RelayProtocol.startOffset(message);
      if (start != null) {
        owner.onStart(this, start);
      }
    }
    ws.request(1);
    return null;
  }

  @Override
  public @Nullable CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
    owner.received();
    byte[] bytes = new byte[data.remaining()];
    data.get(bytes);
    if (bytes.length > 0) {
      owner.onStdout(this, bytes);
    }
    ws.request(1);
    return null;
  }

  @Override
  public @Nullable CompletionStage<?> onPing(WebSocket ws, ByteBuffer message) {
    owner.received();
    return WebSocket.Listener.super.onPing(ws, message);
  }

  @Override
  public @Nullable CompletionStage<?> onPong(WebSocket ws, ByteBuffer message) {
    owner.received();
    return WebSocket.Listener.super.onPong(ws, message);
  }

  @Override
  public @Nullable CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
    owner.onServerClose(this, code, reason);
    return null;
  }

  @Override
  public void onError(WebSocket ws, Throwable error) {
    owner.connectionLost(this, error);
  }
}
