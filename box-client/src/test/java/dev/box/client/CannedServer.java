package dev.box.client;

import static org.assertj.core.api.Assertions.fail;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A JDK {@link HttpServer} on 127.0.0.1 that answers every request with the canned answer of the
 * moment and records what it received, so a test can script an exchange and then inspect it.
 */
final class CannedServer implements AutoCloseable {

  /** One request as the server received it. */
  record Recorded(
      String method,
      String rawPath,
      @Nullable String authorization,
      @Nullable String contentType,
      String body) {}

  private record Answer(int status, String contentType, String body, Duration delay) {}

  private final HttpServer server;
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
  private final BlockingQueue<Recorded> requests = new LinkedBlockingQueue<>();
  private volatile Answer answer = new Answer(200, "application/json", "{}", Duration.ZERO);

  private CannedServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  static CannedServer start() throws IOException {
    return new CannedServer();
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** Answers the following requests with {@code status} and the JSON {@code body}. */
  void answer(int status, String body) {
    answer = new Answer(status, "application/json", body, Duration.ZERO);
  }

  /** Answers the following requests with {@code status} and a {@code contentType} body. */
  void answer(int status, String contentType, String body) {
    answer = new Answer(status, contentType, body, Duration.ZERO);
  }

  /** Answers the following requests with {@code body} after holding each for {@code delay}. */
  void answerAfter(Duration delay, String body) {
    answer = new Answer(200, "application/json", body, delay);
  }

  /** The oldest request not yet taken; fails when none arrives within five seconds. */
  Recorded takeRequest() throws InterruptedException {
    Recorded request = requests.poll(5, TimeUnit.SECONDS);
    if (request == null) {
      return fail("the server received no request");
    }
    return request;
  }

  /** Whether a request arrived that no test took. */
  boolean hasUntakenRequest() {
    return !requests.isEmpty();
  }

  private void handle(HttpExchange exchange) throws IOException {
    Answer current = answer;
    try (exchange) {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      requests.add(
          new Recorded(
              exchange.getRequestMethod(),
              exchange.getRequestURI().getRawPath(),
              exchange.getRequestHeaders().getFirst("Authorization"),
              exchange.getRequestHeaders().getFirst("Content-Type"),
              body));
      Thread.sleep(current.delay());
      byte[] bytes = current.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", current.contentType());
      exchange.sendResponseHeaders(current.status(), bytes.length == 0 ? -1 : bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
