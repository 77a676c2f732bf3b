package dev.box.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import org.jspecify.annotations.Nullable;

/**
 * Raw JSON over HTTP to a server on 127.0.0.1, as any client would speak it, with the server's
 * control token as {@code Authorization: Bearer}.
 */
final class BoxHttp {
  static final ObjectMapper JSON = BoxJson.newMapper();

  /**
   * The control token of every server a {@link ServerFleet} starts, unless its settings name
   * another: random, one per JVM, so that {@link #BoxHttp(int)} and {@link RelaySocket#connect(int,
   * String)} reach any of them.
   */
  static final String FLEET_TOKEN = newToken();

  private final int port;
  private final @Nullable String token;
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  /** A client of a server started by a {@link ServerFleet}, with {@link #FLEET_TOKEN}. */
  BoxHttp(int port) {
    this(port, FLEET_TOKEN);
  }

  /**
   * A client of the server on {@code port} with {@code token}: for a server started otherwise,
   * {@link dev.box.server.BoxServer#controlToken()}; null sends none.
   */
  BoxHttp(int port, @Nullable String token) {
    this.port = port;
    this.token = token;
  }

  private static String newToken() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  int port() {
    return port;
  }

  /** An answer: its status and its body parsed as JSON (an empty object when there is none). */
  record Answer(int status, JsonNode body) {
    String text(String field) {
      return body.path(field).asText();
    }

    String stdout() {
      return text("stdout");
    }

    String stderr() {
      return text("stderr");
    }

    boolean ok() {
      return body.path("ok").asBoolean();
    }

    String errorCode() {
      return body.path("error").path("code").asText();
    }

    String errorMessage() {
      return body.path("error").path("message").asText();
    }
  }

  Answer get(String path) {
    return send("GET", path, "");
  }

  Answer post(String path, String body) {
    return send("POST", path, body);
  }

  Answer delete(String path) {
    return send("DELETE", path, "");
  }

  /** Runs {@code cmd} in {@code session}; {@code more} holds further JSON fields, or is empty. */
  Answer exec(String session, String cmd, String more) {
    return post(
        "/v1/sessions/" + session + "/exec",
        "{\"cmd\":" + quote(cmd) + (more.isEmpty() ? "" : "," + more) + "}");
  }

  static String quote(String text) {
    try {
      return JSON.writeValueAsString(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Answer send(String method, String path, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
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
