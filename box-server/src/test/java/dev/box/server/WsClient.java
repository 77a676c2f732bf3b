package dev.box.server;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A WebSocket client for the relay, on the JDK's {@link WebSocket}: it records every frame it
 * receives, in order, so tests read like a script (as OkHttp's WebSocketRecorder).
 */
final class WsClient implements AutoCloseable {

  /** A received frame: a text message, a binary message, or the close. */
  sealed interface Frame {}

  record Text(String text) implements Frame {}

  record Binary(byte[] bytes) implements Frame {}

  record Close(int code, String reason) implements Frame {}

  private final BlockingQueue<Frame> frames;
  private final WebSocket socket;

  private WsClient(WebSocket socket, BlockingQueue<Frame> frames) {
    this.socket = socket;
    this.frames = frames;
  }

  /** Connects with the server's control token, as {@link TestServer} sends it. */
  static WsClient connect(TestServer box, String path) {
    return connect(box, path, Map.of());
  }

  /** Connects with the server's control token and {@code headers} (which may replace it). */
  static WsClient connect(TestServer box, String path, Map<String, String> headers) {
    Map<String, String> all = new java.util.HashMap<>(box.headers());
    all.putAll(headers);
    return connect(box.server.port(), path, all);
  }

  static WsClient connect(int port, String path, Map<String, String> headers) {
    Recorder recorder = new Recorder();
    WebSocket.Builder builder =
        HttpClient.newHttpClient()
            .newWebSocketBuilder()
            .subprotocols("mcp")
            .connectTimeout(Duration.ofSeconds(10));
    headers.forEach(builder::header);
    WebSocket socket =
        builder.buildAsync(URI.create("ws://127.0.0.1:" + port + path), recorder).join();
    return new WsClient(socket, recorder.frames);
  }

  /** Records every frame in order; text and binary parts are joined. */
  private static final class Recorder implements WebSocket.Listener {
    final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
    private final StringBuilder text = new StringBuilder();
    private final java.io.ByteArrayOutputStream binary = new java.io.ByteArrayOutputStream();

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

  String subprotocol() {
    return socket.getSubprotocol();
  }

  void send(String text) {
    socket.sendText(text, true).join();
  }

  void sendBinary(byte[] bytes) {
    socket.sendBinary(ByteBuffer.wrap(bytes), true).join();
  }

  /** The next frame, failing when none comes within 20 s. */
  Frame next() {
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
  String nextText() {
    Frame frame = next();
    if (frame instanceof Text t) {
      return t.text();
    }
    throw new AssertionError("expected a text frame, got " + frame);
  }

  /** The next frame, which must be the close. */
  Close nextClose() {
    Frame frame = next();
    if (frame instanceof Close c) {
      return c;
    }
    throw new AssertionError("expected the close, got " + frame);
  }

  /** Frames received so far and not yet read. */
  List<Frame> drained() {
    List<Frame> list = new java.util.ArrayList<>();
    frames.drainTo(list);
    return list;
  }

  /**
   * The status and JSON body of a refused WebSocket handshake to {@code path} with the server's
   * control token, sent byte for byte as any client would (the JDK client does not expose a
   * refusal's body).
   */
  static TestServer.Answer refusal(TestServer box, String path) {
    return refusal(box, path, box.headers());
  }

  /** As {@link #refusal(TestServer, String)}, with {@code headers} only. */
  static TestServer.Answer refusal(TestServer box, String path, Map<String, String> headers) {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", box.server.port())) {
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
      socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      String response =
          new String(
              socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      int status = Integer.parseInt(response.substring(9, 12));
      String body = response.substring(response.indexOf("\r\n\r\n") + 4);
      if (!body.startsWith("{")) {
        // Not a Box error (LangBot's text/plain 401, a server page): kept as {"raw": body}.
        return new TestServer.Answer(status, TestServer.JSON.createObjectNode().put("raw", body));
      }
      return new TestServer.Answer(status, TestServer.JSON.readTree(body));
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    try {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();
    } catch (java.util.concurrent.CompletionException e) {
      // The server closed first.
    }
    socket.abort();
  }
}
