package dev.box.testclient;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Raw JSON over HTTP to a Box server on 127.0.0.1, as any client would speak it: every request
 * sends this client's headers (usually {@code Authorization: Bearer} with the control token). Not
 * thread-safe while a test changes the headers; each request waits at most 120 s.
 */
public final class BoxHttp {
  /** The wire model's JSON mapper. */
  public static final ObjectMapper JSON = BoxJson.newMapper();

  private final int port;
  private final Map<String, String> headers;
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  /** A client of the server on {@code port} that sends {@code headers} with every request. */
  public BoxHttp(int port, Map<String, String> headers) {
    this.port = port;
    this.headers = new LinkedHashMap<>(headers);
  }

  /** The headers that send {@code token} as {@code Authorization: Bearer}; none for null. */
  public static Map<String, String> bearer(@Nullable String token) {
    return token == null ? Map.of() : Map.of("Authorization", "Bearer " + token);
  }

  /** The server's port. */
  public int port() {
    return port;
  }

  /** The headers every request sends. */
  public Map<String, String> headers() {
    return Map.copyOf(headers);
  }

  /** Sends {@code name: value} with every later request, replacing any earlier value. */
  public BoxHttp withHeader(String name, String value) {
    headers.put(name, value);
    return this;
  }

  /** {@code text} as a JSON string literal, quotes included. */
  public static String quote(String text) {
    try {
      return JSON.writeValueAsString(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public Answer get(String path) {
    return send("GET", path, "");
  }

  public Answer post(String path, String body) {
    return send("POST", path, body);
  }

  public Answer delete(String path) {
    return send("DELETE", path, "");
  }

  /** Runs {@code cmd} in {@code session}; {@code more} holds further JSON fields, or is empty. */
  public Answer exec(String session, String cmd, String more) {
    return post(
        "/v1/sessions/" + session + "/exec",
        "{\"cmd\":" + quote(cmd) + (more.isEmpty() ? "" : "," + more) + "}");
  }

  /** Runs {@code cmd} in {@code session} with no further fields. */
  public Answer exec(String session, String cmd) {
    return exec(session, cmd, "");
  }

  /**
   * An answer as bytes, for the files routes.
   *
   * @param status the HTTP status
   * @param body the body's bytes
   */
  public record Bytes(int status, byte[] body) {
    /** The body read as JSON (an error or a JSON answer). */
    public JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** The error code of an error answer, or an empty string. */
    public String errorCode() {
      return json().path("error").path("code").asText();
    }
  }

  /** Sends {@code body} as raw bytes and answers raw bytes, with this client's headers. */
  public Bytes sendBytes(String method, String path, byte[] body) {
    return sendBytes(method, path, HttpRequest.BodyPublishers.ofByteArray(body));
  }

  /**
   * Sends {@code body} as raw bytes (a publisher of unknown length is sent chunked) and answers raw
   * bytes, with this client's headers.
   */
  public Bytes sendBytes(String method, String path, HttpRequest.BodyPublisher body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(120))
            .method(method, body);
    headers.forEach(request::header);
    try {
      HttpResponse<byte[]> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
      return new Bytes(response.statusCode(), response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(method + " " + path + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during " + method + " " + path, e);
    }
  }

  /** {@code text} encoded for a query parameter. */
  public static String query(String text) {
    return java.net.URLEncoder.encode(text, java.nio.charset.StandardCharsets.UTF_8)
        .replace("+", "%20");
  }

  /** Sends a request with this client's headers. */
  public Answer send(String method, String path, String body) {
    return send(method, path, body, headers);
  }

  /** Sends a request with {@code requestHeaders} only: no control token unless they hold one. */
  public Answer send(String method, String path, String body, Map<String, String> requestHeaders) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(120))
            .method(method, HttpRequest.BodyPublishers.ofString(body));
    requestHeaders.forEach(request::header);
    try {
      HttpResponse<String> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      JsonNode json =
          response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
      return new Answer(response.statusCode(), json);
    } catch (IOException e) {
      throw new UncheckedIOException(method + " " + path + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during " + method + " " + path, e);
    }
  }
}
