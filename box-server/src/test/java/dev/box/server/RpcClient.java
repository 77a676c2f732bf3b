package dev.box.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A foreign client of {@code /rpc/ws}: it writes the reference's JSON envelopes as raw text frames
 * on the JDK's WebSocket and reads raw frames back, with none of this project's classes.
 */
final class RpcClient implements AutoCloseable {
  static final ObjectMapper JSON = BoxJson.newMapper();

  private final WebSocket socket;
  private final BlockingQueue<String> received;
  private final AtomicInteger seq = new AtomicInteger(100);

  private RpcClient(WebSocket socket, BlockingQueue<String> received) {
    this.socket = socket;
    this.received = received;
  }

  /** Connects as LangBot's trusted instance of the tests ({@link LangBotConformanceTest}). */
  static RpcClient asLangBot(int port) {
    return connect(
        port,
        Map.of(
            "X-LangBot-Box-Control-Token",
            LangBotServers.TOKEN,
            "X-LangBot-Instance-Id",
            LangBotServers.INSTANCE));
  }

  /** Connects as {@code instance} with the token {@code server} requires. */
  static RpcClient withTokenOf(BoxServer server, String instance) {
    return connect(
        server.port(),
        Map.of(
            "X-LangBot-Box-Control-Token",
            Objects.requireNonNull(server.controlToken(), "the server requires a token"),
            "X-LangBot-Instance-Id",
            instance));
  }

  /** The status of a WebSocket handshake to {@code path} with {@code headers}: 101 if accepted. */
  static int handshakeStatus(int port, String path, Map<String, String> headers) {
    WebSocket.Builder builder = HttpClient.newHttpClient().newWebSocketBuilder();
    headers.forEach(builder::header);
    try {
      builder
          .buildAsync(URI.create("ws://127.0.0.1:" + port + path), new WebSocket.Listener() {})
          .join()
          .abort();
      return 101;
    } catch (CompletionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException handshake) {
        return handshake.getResponse().statusCode();
      }
      throw e;
    }
  }

  /** The data of a successful answer; fails with the answer when it is an error. */
  static JsonNode data(JsonNode response) {
    if (response.path("code").asInt(-1) != 0) {
      throw new AssertionError("the action failed: " + response);
    }
    return response.path("data");
  }

  /** Connects with {@code headers}; fails with the handshake exception when refused. */
  static RpcClient connect(int port, Map<String, String> headers) {
    BlockingQueue<String> received = new LinkedBlockingQueue<>();
    WebSocket.Builder builder =
        HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10));
    headers.forEach(builder::header);
    WebSocket socket =
        builder
            .buildAsync(
                URI.create("ws://127.0.0.1:" + port + "/rpc/ws"),
                new WebSocket.Listener() {
                  private final StringBuilder text = new StringBuilder();

                  @Override
                  public void onOpen(WebSocket ws) {
                    ws.request(Long.MAX_VALUE);
                  }

                  @Override
                  public @Nullable CompletionStage<?> onText(
                      WebSocket ws, CharSequence data, boolean last) {
                    text.append(data);
                    if (last) {
                      received.add(text.toString());
                      text.setLength(0);
                    }
                    return null;
                  }
                })
            .join();
    return new RpcClient(socket, received);
  }

  /** Sends a raw text frame. */
  void sendRaw(String text) {
    socket.sendText(text, true).join();
  }

  /** Calls {@code action} and returns the data it answers; fails the test when it fails. */
  JsonNode callData(String action, String data, @Nullable String context) {
    return data(call(action, data, context));
  }

  /** Sends {@code {"seq_id", "action", "data", "context"?}} and returns the matching response. */
  JsonNode call(String action, String data, @Nullable String context) {
    int id = seq.incrementAndGet();
    sendRaw(
        "{\"seq_id\": "
            + id
            + ", \"action\": \""
            + action
            + "\", \"data\": "
            + data
            + (context == null ? "" : ", \"context\": " + context)
            + "}");
    return awaitResponse(id);
  }

  JsonNode awaitResponse(int id) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    try {
      while (System.nanoTime() < deadline) {
        String text = received.poll(1, TimeUnit.SECONDS);
        if (text == null) {
          continue;
        }
        JsonNode node = JSON.readTree(text);
        if (node.path("seq_id").asInt() == id && node.has("code")) {
          return node;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new AssertionError("no response to seq_id " + id);
  }

  @Override
  public void close() {
    socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();
  }
}
