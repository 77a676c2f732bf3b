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
import java.time.Duration;

/** Raw JSON over HTTP to a server on 127.0.0.1, as any client would speak it. */
final class BoxHttp {
  static final ObjectMapper JSON = BoxJson.newMapper();

  private final int port;
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  BoxHttp(int port) {
    this.port = port;
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
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", "application/json")
            .method(method, HttpRequest.BodyPublishers.ofString(body))
            .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
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
