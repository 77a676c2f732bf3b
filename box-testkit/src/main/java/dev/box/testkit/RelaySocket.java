package dev.box.testkit;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A line-mode client of a managed process's relay WebSocket (docs/RELAY.md): each text frame sent
 * is one line of the process's stdin, each text frame received one line of its stdout.
 */
final class RelaySocket implements AutoCloseable {
  private final WebSocket socket;
  private final BlockingQueue<String> frames;

  private RelaySocket(WebSocket socket, BlockingQueue<String> frames) {
    this.socket = socket;
    this.frames = frames;
  }

  /** Connects to a server started by a {@link ServerFleet}, with {@link BoxHttp#FLEET_TOKEN}. */
  static RelaySocket connect(int port, String path) {
    return connect(port, path, BoxHttp.FLEET_TOKEN);
  }

  /** Connects to the server on {@code port} with {@code token}; null sends none. */
  static RelaySocket connect(int port, String path, @Nullable String token) {
    BlockingQueue<String> frames = new LinkedBlockingQueue<>();
    WebSocket.Builder builder =
        HttpClient.newHttpClient()
            .newWebSocketBuilder()
            .subprotocols("mcp")
            .connectTimeout(Duration.ofSeconds(10));
    if (token != null) {
      builder.header("Authorization", "Bearer " + token);
    }
    WebSocket socket =
        builder
            .buildAsync(URI.create("ws://127.0.0.1:" + port + path), new Recorder(frames))
            .join();
    return new RelaySocket(socket, frames);
  }

  /** Records text messages; a close or an error is recorded as {@code close:<code> <reason>}. */
  private static final class Recorder implements WebSocket.Listener {
    private final BlockingQueue<String> frames;
    private final StringBuilder text = new StringBuilder();

    Recorder(BlockingQueue<String> frames) {
      this.frames = frames;
    }

    @Override
    public void onOpen(WebSocket webSocket) {
      webSocket.request(Long.MAX_VALUE);
    }

    @Override
    public @Nullable CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        frames.add(text.toString());
        text.setLength(0);
      }
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
      frames.add("close:" + statusCode + " " + reason);
      return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
      frames.add("close:-1 " + error);
    }
  }

  void sendLine(String line) {
    socket.sendText(line, true).join();
  }

  /** The next text frame, failing when none comes within 20 s. */
  String nextLine() {
    try {
      String frame = frames.poll(20, TimeUnit.SECONDS);
      if (frame == null) {
        throw new AssertionError("no frame from the relay within 20 s");
      }
      return frame;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
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
