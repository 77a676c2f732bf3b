package dev.box.backend.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.remote.Printable;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * E2B's control plane (openapi.yml): create, list, time out and kill sandboxes. The API key travels
 * in the {@code X-API-Key} header only. Every answer is read up to {@link #MAX_ANSWER_BYTES} and
 * parsed as untrusted input.
 */
final class ControlPlane {
  /** The most an answer of the control plane may hold. */
  static final int MAX_ANSWER_BYTES = 4 << 20;

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final String apiUrl;
  private final String apiKey;

  ControlPlane(HttpClient http, String apiUrl, String apiKey) {
    this.http = http;
    this.apiUrl = apiUrl;
    this.apiKey = apiKey;
  }

  /** A sandbox as {@code POST /sandboxes} answers it. */
  record Created(String sandboxId, @Nullable String envdAccessToken, @Nullable String domain) {}

  /** A sandbox as {@code GET /sandboxes} lists it. */
  record Listed(String sandboxId, Map<String, String> metadata) {}

  /**
   * Creates a sandbox from {@code template} that expires {@code timeout} after creation unless its
   * timeout is set again.
   */
  Created create(
      String template,
      Duration timeout,
      Map<String, String> metadata,
      Map<String, String> envVars,
      boolean internet)
      throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("templateID", template);
    body.put("timeout", (int) timeout.toSeconds());
    body.put("metadata", metadata);
    body.put("envVars", envVars);
    body.put("allow_internet_access", internet);
    JsonNode answer = call("POST", "/sandboxes", body, 201);
    String id = answer.path("sandboxID").asText("");
    if (!SandboxIds.valid(id)) {
      throw new IOException("the control plane answered a malformed sandboxID");
    }
    return new Created(
        id, textOrNull(answer.path("envdAccessToken")), textOrNull(answer.path("domain")));
  }

  /** Kills the sandbox; one already gone is not an error. */
  void kill(String sandboxId) throws IOException {
    call("DELETE", "/sandboxes/" + sandboxId, null, 204, 404);
  }

  /** Sets the sandbox to expire {@code timeout} from now. */
  void setTimeout(String sandboxId, Duration timeout) throws IOException {
    call(
        "POST",
        "/sandboxes/" + sandboxId + "/timeout",
        Map.of("timeout", (int) timeout.toSeconds()),
        204);
  }

  /** Whether the sandbox is running. */
  boolean isRunning(String sandboxId) throws IOException {
    return call("GET", "/sandboxes/" + sandboxId, null, 200, 404).has("sandboxID");
  }

  /** The running sandboxes whose metadata holds every entry of {@code filter}. */
  List<Listed> list(Map<String, String> filter) throws IOException {
    String query =
        filter.entrySet().stream()
            .map(e -> encode(e.getKey()) + "=" + encode(e.getValue()))
            .collect(Collectors.joining("&"));
    JsonNode answer = call("GET", "/sandboxes?metadata=" + encode(query), null, 200);
    List<Listed> listed = new ArrayList<>();
    for (JsonNode node : answer) {
      String id = node.path("sandboxID").asText("");
      if (!SandboxIds.valid(id)) {
        continue;
      }
      Map<String, String> metadata = new LinkedHashMap<>();
      node.path("metadata")
          .properties()
          .forEach(e -> metadata.put(e.getKey(), e.getValue().asText()));
      listed.add(new Listed(id, metadata));
    }
    return listed;
  }

  private JsonNode call(String method, String path, @Nullable Object body, int... accepted)
      throws IOException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(apiUrl + path))
            .timeout(CALL_TIMEOUT)
            .header("X-API-Key", apiKey)
            .header("Accept", "application/json");
    if (body != null) {
      request
          .header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
    } else {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    }
    HttpResponse<InputStream> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while calling the E2B control plane", e);
    }
    byte[] bytes;
    try (InputStream in = response.body()) {
      bytes = in.readNBytes(MAX_ANSWER_BYTES);
    }
    for (int status : accepted) {
      if (response.statusCode() == status) {
        return bytes.length == 0 || status == 404 ? JSON.createObjectNode() : JSON.readTree(bytes);
      }
    }
    throw new IOException(
        method
            + " "
            + path.replaceAll("\\?.*", "")
            + " answered "
            + response.statusCode()
            + ": "
            + Printable.excerpt(bytes));
  }

  private static @Nullable String textOrNull(JsonNode node) {
    return node.isTextual() && !node.asText().isBlank() ? node.asText() : null;
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }
}
