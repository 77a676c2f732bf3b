package dev.box.backend.boxlite;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.remote.Printable;
import java.io.IOException;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Decodes what the attach WebSocket of an execution sends, all of it hostile: a binary message is
 * {@code [channel][payload]} (0x01 stdout, 0x02 stderr), delivered in parts as they come, never
 * gathered; a text message is JSON ({@code {"type":"exit","exit_code":N}}, {@code
 * {"type":"error",...}}), gathered up to {@link #MAX_TEXT_CHARS}. An unknown channel, an oversized
 * text or an exit code out of range aborts the socket.
 *
 * <p>One message part at a time is requested, and the next only once the reader has taken the last
 * ({@link #next}): a reader that falls behind holds the server back instead of filling the heap.
 */
final class AttachListener implements WebSocket.Listener {
  /** The most characters a text message may hold. */
  static final int MAX_TEXT_CHARS = 4096;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final BlockingQueue<AttachEvent> events = new LinkedBlockingQueue<>();
  private final StringBuilder text = new StringBuilder();
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile @Nullable WebSocket socket;

  /** Whether the current binary message is stderr; null between binary messages. */
  private @Nullable Boolean channel;

  @Override
  public void onOpen(WebSocket webSocket) {
    socket = webSocket;
    webSocket.request(1);
  }

  /** The next event, waiting for it; the one after it is requested from then on. */
  AttachEvent next() throws InterruptedException {
    AttachEvent event = events.take();
    WebSocket ws = socket;
    if (!(event instanceof AttachEvent.Ended) && ws != null) {
      ws.request(1);
    }
    return event;
  }

  @Override
  public @Nullable CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
    Boolean stderr = channel;
    if (stderr == null) {
      if (!data.hasRemaining()) {
        return refuse(webSocket, "a binary message without a channel byte");
      }
      byte first = data.get();
      if (first != 1 && first != 2) {
        return refuse(webSocket, "a binary message on unknown channel " + (first & 0xff));
      }
      stderr = first == 2;
    }
    channel = last ? null : stderr;
    byte[] bytes = new byte[data.remaining()];
    data.get(bytes);
    events.add(new AttachEvent.Output(stderr, bytes));
    return null;
  }

  @Override
  public @Nullable CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
    if (text.length() + data.length() > MAX_TEXT_CHARS) {
      return refuse(webSocket, "a text message longer than " + MAX_TEXT_CHARS + " characters");
    }
    text.append(data);
    if (!last) {
      webSocket.request(1);
      return null;
    }
    String message = text.toString();
    text.setLength(0);
    AttachEvent event;
    try {
      event = decode(JSON.readTree(message));
    } catch (IOException e) {
      return refuse(webSocket, "a text message that is not JSON");
    }
    if (event == null) {
      return refuse(webSocket, "an exit message without an exit code from 0 to 255");
    }
    events.add(event);
    return null;
  }

  /** The event of a control message, or null for an exit message without a valid code. */
  private static @Nullable AttachEvent decode(JsonNode message) {
    String type = message.path("type").asText("");
    if (type.equals("exit")) {
      JsonNode code = message.path("exit_code");
      return code.canConvertToInt() && code.asInt() >= 0 && code.asInt() <= 255
          ? new AttachEvent.Exit(code.asInt())
          : null;
    }
    JsonNode detail = message.path("message");
    return new AttachEvent.Other(
        Printable.excerpt(type + (detail.isTextual() ? ": " + detail.asText() : "")));
  }

  @Override
  public @Nullable CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
    end("closed by the server (" + statusCode + ")");
    return null;
  }

  @Override
  public void onError(WebSocket webSocket, Throwable error) {
    end("broken: " + error);
  }

  private @Nullable CompletionStage<?> refuse(WebSocket webSocket, String what) {
    webSocket.abort();
    end("refused: the server sent " + what);
    return null;
  }

  private void end(String why) {
    if (ended.compareAndSet(false, true)) {
      events.add(new AttachEvent.Ended(why));
    }
  }
}
