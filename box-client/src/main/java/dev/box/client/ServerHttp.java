package dev.box.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP under a {@link BoxClient}: one JDK {@link HttpClient}, the server's base address and the
 * {@code Authorization} header, and the three ways the client talks to the server: a JSON call, a
 * streamed call of the files API, and a WebSocket of the relay. Every failure leaves here as a
 * {@link BoxException}: an error answer as the subtype the server raised ({@link ErrorAnswers}), an
 * unreachable or silent server as {@link dev.box.api.BoxRuntimeUnavailableException}.
 */
final class ServerHttp implements AutoCloseable {
  private final URI baseUri;
  private final String base;
  private final @Nullable String authorization;
  private final Duration requestTimeout;
  private final HttpClient http;
  private final ObjectMapper mapper = BoxJson.newMapper();

  ServerHttp(URI baseUri, @Nullable String controlToken, Duration requestTimeout) {
    this.baseUri = baseUri;
    this.base = baseUri.toString().replaceAll("/+$", "");
    this.authorization = controlToken == null ? null : "Bearer " + controlToken;
    this.requestTimeout = requestTimeout;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(requestTimeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  /** The time a request, a connection or a detach may take. */
  Duration requestTimeout() {
    return requestTimeout;
  }

  /**
   * Sends one JSON request and reads its answer as {@code answer}; see {@link #call(String, String,
   * Object, Duration, JavaType)}.
   */
  <T> T call(String method, String path, @Nullable Object body, Duration timeout, Class<T> answer) {
    return call(method, path, body, timeout, mapper.constructType(answer));
  }

  /**
   * Sends one JSON request and reads its answer as {@code answer}; see {@link #call(String, String,
   * Object, Duration, JavaType)}.
   */
  <T> T call(
      String method,
      String path,
      @Nullable Object body,
      Duration timeout,
      TypeReference<T> answer) {
    return call(method, path, body, timeout, mapper.getTypeFactory().constructType(answer));
  }

  /**
   * Sends one JSON request and reads its answer as {@code answer}.
   *
   * @param path the route, its query included
   * @param body what to send as JSON, or null for nothing
   */
  private <T> T call(
      String method, String path, @Nullable Object body, Duration timeout, JavaType answer) {
    URI uri = URI.create(base + path);
    HttpResponse<String> response = exchange(method, uri, body, timeout);
    try {
      return mapper.readValue(response.body(), answer);
    } catch (JsonProcessingException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "unexpected answer to " + method + " " + uri + ": " + e.getOriginalMessage(),
          e);
    }
  }

  /**
   * Sends one JSON request whose success has no body ({@code 204 No Content}); an error answer
   * becomes its {@link BoxException}.
   */
  void callForNothing(String method, String path, Duration timeout) {
    exchange(method, URI.create(base + path), null, timeout);
  }

  /** Sends one JSON request; an error answer becomes its {@link BoxException}. */
  private HttpResponse<String> exchange(
      String method, URI uri, @Nullable Object body, Duration timeout) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json");
    authorize(request);
    if (body == null) {
      request.method(method, BodyPublishers.noBody());
    } else {
      request
          .header("Content-Type", "application/json")
          .method(method, BodyPublishers.ofString(encode(body), StandardCharsets.UTF_8));
    }
    HttpResponse<String> response =
        send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8));
    if (response.statusCode() >= 400) {
      throw ErrorAnswers.toException(response.statusCode(), response.body(), method, uri);
    }
    return response;
  }

  /**
   * Sends one request of the files API and answers its body as a stream once the status says it
   * succeeded; an error answer becomes its {@link BoxException}.
   *
   * @param path the route, its query included
   * @param body what to send, {@link BodyPublishers#noBody()} for nothing
   * @param timeout how long the answer's status and headers may take
   */
  HttpResponse<InputStream> stream(
      String method, String path, HttpRequest.BodyPublisher body, Duration timeout) {
    URI uri = URI.create(base + path);
    HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout);
    authorize(request);
    request.header("Content-Type", "application/octet-stream").method(method, body);
    if (body.contentLength() != 0) {
      // An upload the server refuses up front (too large, no such session) is then never sent.
      request.expectContinue(true);
    }
    HttpResponse<InputStream> response = send(request.build(), BodyHandlers.ofInputStream());
    if (response.statusCode() >= 400) {
      throw ErrorAnswers.toException(response.statusCode(), text(response), method, uri);
    }
    return response;
  }

  /**
   * Sends a JSON request whose answer streams as lines of JSON ({@code application/x-ndjson}), and
   * answers its body once the status says it succeeded; an error answer becomes its {@link
   * BoxException}.
   *
   * @param timeout how long the answer's status and headers may take
   */
  HttpResponse<InputStream> streamJson(String method, String path, Object body, Duration timeout) {
    URI uri = URI.create(base + path);
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/x-ndjson");
    authorize(request);
    request
        .header("Content-Type", "application/json")
        .method(method, BodyPublishers.ofString(encode(body), StandardCharsets.UTF_8));
    HttpResponse<InputStream> response = send(request.build(), BodyHandlers.ofInputStream());
    if (response.statusCode() >= 400) {
      throw ErrorAnswers.toException(response.statusCode(), text(response), method, uri);
    }
    return response;
  }

  /** The start of an error answer's body, for its error. */
  private static String text(HttpResponse<InputStream> response) {
    try (InputStream in = response.body()) {
      return new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  /** The mapper of every JSON body. */
  ObjectMapper mapper() {
    return mapper;
  }

  /** Reads a JSON answer of the files API. */
  <T> T read(HttpResponse<InputStream> response, Class<T> answer) {
    try (InputStream in = response.body()) {
      return mapper.readValue(in, answer);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          "unexpected answer to " + response.request().method() + " " + response.uri() + ": " + e,
          e);
    }
  }

  /**
   * Opens a WebSocket at {@code path} and returns once the server accepted it.
   *
   * @throws BoxException the server's refusal, or {@link
   *     dev.box.api.BoxRuntimeUnavailableException}
   */
  WebSocket openWebSocket(String path, WebSocket.Listener listener) {
    String scheme = baseUri.getScheme().equalsIgnoreCase("https") ? "wss" : "ws";
    URI uri = URI.create(scheme + base.substring(baseUri.getScheme().length()) + path);
    WebSocket.Builder builder = http.newWebSocketBuilder().connectTimeout(requestTimeout);
    if (authorization != null) {
      builder.header("Authorization", authorization);
    }
    CompletableFuture<WebSocket> opening = builder.buildAsync(uri, listener);
    try {
      return opening.get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException refused) {
        HttpResponse<?> answer = refused.getResponse();
        String body = answer.body() instanceof String text ? text : "";
        throw ErrorAnswers.toException(answer.statusCode(), body, "GET", uri);
      }
      throw ErrorAnswers.unavailable(e.getCause() instanceof Exception cause ? cause : e);
    } catch (TimeoutException e) {
      abortWhenOpen(opening);
      throw ErrorAnswers.unavailable(e);
    } catch (InterruptedException e) {
      abortWhenOpen(opening);
      Thread.currentThread().interrupt();
      throw ErrorAnswers.unavailable(e);
    }
  }

  /** Releases the connections; the JDK's {@code close()} waits for open WebSockets to end. */
  @Override
  public void close() {
    http.close();
  }

  /** A connection given up on may still open later: it is closed then. */
  private static void abortWhenOpen(CompletableFuture<WebSocket> opening) {
    var unused = opening.thenAccept(WebSocket::abort);
  }

  private void authorize(HttpRequest.Builder request) {
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
  }

  private String encode(Object body) {
    try {
      return mapper.writeValueAsString(body);
    } catch (JsonProcessingException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot encode the request: " + e.getOriginalMessage(), e);
    }
  }

  private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> body) {
    try {
      return http.send(request, body);
    } catch (IOException e) {
      throw ErrorAnswers.unavailable(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw ErrorAnswers.unavailable(e);
    }
  }
}
