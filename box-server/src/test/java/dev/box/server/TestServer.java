package dev.box.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A real Box server on 127.0.0.1 with a fresh data directory, and a raw HTTP client for it: the
 * tests speak JSON over a socket as any client would, with the server's control token (the one it
 * generated, unless the settings configure one) unless a test says otherwise.
 */
final class TestServer implements AutoCloseable {
  static final ObjectMapper JSON = BoxJson.newMapper();

  final BoxServer server;
  final Path dataDir;
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final Map<String, String> headers = new HashMap<>();

  private TestServer(BoxServer server, Path dataDir) {
    this.server = server;
    this.dataDir = dataDir;
    String token = server.controlToken();
    if (token != null) {
      headers.put("Authorization", "Bearer " + token);
    }
  }

  static TestServer start(String... settings) {
    return start(Clock.systemUTC(), settings);
  }

  /** Starts a server; {@code settings} are flag keys and values, as {@code "max_sessions", "2"}. */
  static TestServer start(Clock clock, String... settings) {
    try {
      Path dataDir = Files.createTempDirectory("box-test-");
      Map<String, String> flags = new HashMap<>();
      flags.put("port", "0");
      flags.put("data_dir", dataDir.toString());
      flags.put("backend", "bwrap");
      for (int i = 0; i < settings.length; i += 2) {
        flags.put(settings[i], settings[i + 1]);
      }
      return new TestServer(BoxServer.start(ServerConfig.resolve(flags, Map.of()), clock), dataDir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The token the server requires, or null when it runs with {@code insecure}. */
  @Nullable String token() {
    return server.controlToken();
  }

  /** The headers every request sends: the server's token unless a test replaced it. */
  Map<String, String> headers() {
    return Map.copyOf(headers);
  }

  /** Sends {@code header} with every later request. */
  TestServer withHeader(String name, String value) {
    headers.put(name, value);
    return this;
  }

  /** An answer: its status and its body parsed as JSON. */
  record Answer(int status, JsonNode body) {
    String text(String field) {
      return body.path(field).asText();
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

  /** Runs {@code cmd} in {@code session} with the extra JSON fields in {@code more}. */
  Answer exec(String session, String cmd, String more) {
    String body;
    try {
      body = "{\"cmd\":" + JSON.writeValueAsString(cmd) + (more.isEmpty() ? "" : "," + more) + "}";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return post("/v1/sessions/" + session + "/exec", body);
  }

  Answer exec(String session, String cmd) {
    return exec(session, cmd, "");
  }

  Answer send(String method, String path, String body) {
    return send(method, path, body, headers);
  }

  /** Sends a request with {@code requestHeaders} only: no control token unless they hold one. */
  Answer send(String method, String path, String body, Map<String, String> requestHeaders) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
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
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    server.close();
  }
}
