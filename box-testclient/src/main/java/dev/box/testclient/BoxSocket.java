package dev.box.testclient;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A WebSocket client of a Box server on 127.0.0.1 (a managed process's relay, {@code /rpc/ws}), on
 * the JDK's {@link WebSocket}: it records every frame it receives, in order, so tests read like a
 * script (as OkHttp's WebSocketRecorder). It offers the subprotocol {@code mcp}.
 */
public final class BoxSocket implements AutoCloseable {

  /** A received frame: a text message, a binary message, or the close. */
  public sealed interface Frame {}

  /** A whole text message. */
  public record Text(String text) implements Frame {}

  /** A whole binary message. */
  public record Binary(byte[] bytes) implements Frame {}

  /** The close, or an error as code -1. */
  public record Close(int code, String reason) implements Frame {}

  private final BlockingQueue<Frame> frames;
  private final WebSocket socket;

  private BoxSocket(WebSocket socket, BlockingQueue<Frame> frames) {
    this.socket = socket;
    this.frames = frames;
  }

  /** Connects to {@code path} on the server on {@code port}, sending {@code headers}. */
  public static BoxSocket connect(int port, String path, Map<String, String> headers) {
    Recorder recorder = new Recorder();
    WebSocket.Builder builder =
        HttpClient.newHttpClient()
            .newWebSocketBuilder()
            .subprotocols("mcp")
            .connectTimeout(Duration.ofSeconds(10));
    headers.forEach(builder::header);
    WebSocket socket =
        builder.buildAsync(URI.create("ws://127.0.0.1:" + port + path), recorder).join();
    return new BoxSocket(socket, recorder.frames);
  }

  /** Records every frame in order; text and binary parts are joined. */
  private static final class Recorder implements WebSocket.Listener {
    final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
    private final StringBuilder text = new StringBuilder();
    private final ByteArrayOutputStream binary = new ByteArrayOutputStream();

    @Override
    public void onOpen(WebSocket webSocket) {
      webSocket.request(Long.MAX_VALUE);
    }

    @Override
    public @Nullable CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        frames.add(new Text(text.toString()));
        text.setLength(0);
      }
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
      byte[] bytes = new byte[data.remaining()];
      data.get(bytes);
      binary.writeBytes(bytes);
      if (last) {
        frames.add(new Binary(binary.toByteArray()));
        binary.reset();
      }
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
      frames.add(new Close(statusCode, reason));
      return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
      frames.add(new Close(-1, String.valueOf(error)));
    }
  }

  /** The subprotocol the server chose. */
  public String subprotocol() {
    return socket.getSubprotocol();
  }

  /** Sends {@code text} as one text message. */
  public void send(String text) {
    socket.sendText(text, true).join();
  }

  /** Sends {@code bytes} as one binary message. */
  public void sendBinary(byte[] bytes) {
    socket.sendBinary(ByteBuffer.wrap(bytes), true).join();
  }

  /** The next frame, failing when none comes within 20 s. */
  public Frame next() {
    try {
      Frame frame = frames.poll(20, TimeUnit.SECONDS);
      if (frame == null) {
        throw new AssertionError("no frame within 20 s");
      }
      return frame;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The next frame, which must be text. */
  public String nextText() {
    Frame frame = next();
    if (frame instanceof Text t) {
      return t.text();
    }
    throw new AssertionError("expected a text frame, got " + frame);
  }

  /** The next frame, which must be the close. */
  public Close nextClose() {
    Frame frame = next();
    if (frame instanceof Close c) {
      return c;
    }
    throw new AssertionError("expected the close, got " + frame);
  }

  /**
   * The status and JSON body of a refused WebSocket handshake to {@code path} with {@code headers}
   * only, sent byte for byte as any client would (the JDK client does not expose a refusal's body).
   * A body that is not JSON is kept as {@code {"raw": body}}.
   */
  public static Answer refusal(int port, String path, Map<String, String> headers) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      StringBuilder extra = new StringBuilder();
      headers.forEach(
          (name, value) -> extra.append(name).append(": ").append(value).append("\r\n"));
      String request =
          "GET "
              + path
              + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
              + "Sec-WebSocket-Protocol: mcp\r\n"
              + extra
              + "Connection: close\r\n\r\n";
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int status = Integer.parseInt(response.substring(9, 12));
      String body = response.substring(response.indexOf("\r\n\r\n") + 4);
      if (!body.startsWith("{")) {
        // Not a Box error (LangBot's text/plain 401, a server page): kept as {"raw": body}.
        return new Answer(status, BoxHttp.JSON.createObjectNode().put("raw", body));
      }
      return new Answer(status, BoxHttp.JSON.readTree(body));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    try {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();
    } catch (CompletionException e) {
      // The server closed first.
    }
    socket.abort();
  }
}
