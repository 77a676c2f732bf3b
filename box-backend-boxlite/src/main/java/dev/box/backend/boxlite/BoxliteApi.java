package dev.box.backend.boxlite;

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
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;

/**
 * The routes of BoxLite's REST API (box.openapi.yaml) that Box uses, on a single-tenant server
 * ({@code boxlite serve}: no routing prefix, {@code /v1/boxes/...}). The token travels in the
 * {@code Authorization: Bearer} header only. Every answer is read up to {@link #MAX_ANSWER_BYTES}
 * and parsed as untrusted input; every identifier the server hands out is checked before it goes
 * into a URL.
 */
final class BoxliteApi {
  /** The most an answer may hold. */
  static final int MAX_ANSWER_BYTES = 4 << 20;

  /** The most pages of boxes a listing reads. */
  private static final int MAX_PAGES = 100;

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration ATTACH_TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What a box or execution id may look like before it goes into a URL path. */
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  private final HttpClient http;
  private final String base;
  private final String token;

  BoxliteApi(HttpClient http, String url, String token) {
    this.http = http;
    this.base = url + "/v1";
    this.token = token;
  }

  /** An answer the server gave with a status the call does not accept. */
  static final class Refused extends IOException {
    private static final long serialVersionUID = 1L;

    final int status;

    Refused(String call, int status, String detail) {
      super(call + " answered " + status + (detail.isEmpty() ? "" : ": " + detail));
      this.status = status;
    }
  }

  /** A box as {@code GET /v1/boxes} lists it; its name is empty when it has none. */
  record Listed(String boxId, String name, String status) {}

  /** Checks the token: {@code GET /v1/me}. */
  void whoAmI() throws IOException {
    call("GET", "/me", null, 200);
  }

  /** Creates a box ({@code POST /v1/boxes}) and returns its id. */
  String create(Map<String, Object> body) throws IOException {
    return checkedId(call("POST", "/boxes", body, 201).path("box_id"), "box_id");
  }

  /** Starts the box's VM ({@code POST /v1/boxes/{id}/start}); idempotent. */
  void start(String boxId) throws IOException {
    call("POST", box(boxId) + "/start", null, 200);
  }

  /** Removes the box, running or not; one already gone is not an error. */
  void remove(String boxId) throws IOException {
    call("DELETE", box(boxId) + "?force=true", null, 204, 404);
  }

  /** The box's status ({@code configured}, {@code running}, ...), or null when there is none. */
  @Nullable String status(String boxId) throws IOException {
    JsonNode box = call("GET", box(boxId), null, 200, 404);
    return box.path("status").isTextual() ? box.path("status").asText() : null;
  }

  /** Every box the server lists, page after page. */
  List<Listed> list() throws IOException {
    List<Listed> listed = new ArrayList<>();
    String page = null;
    for (int i = 0; i < MAX_PAGES; i++) {
      String query = page == null ? "" : "?page_token=" + encode(page);
      JsonNode answer = call("GET", "/boxes" + query, null, 200);
      for (JsonNode node : answer.path("boxes")) {
        String id = node.path("box_id").asText("");
        if (!ID.matcher(id).matches()) {
          continue;
        }
        listed.add(new Listed(id, node.path("name").asText(""), node.path("status").asText("")));
      }
      JsonNode next = answer.path("next_page_token");
      if (!next.isTextual() || next.asText().isEmpty()) {
        return listed;
      }
      page = next.asText();
    }
    throw new IOException("GET /v1/boxes gave more than " + MAX_PAGES + " pages");
  }

  /** Starts an execution ({@code POST /v1/boxes/{id}/exec}) and returns its id. */
  String exec(String boxId, Map<String, Object> body) throws IOException {
    return checkedId(call("POST", box(boxId) + "/exec", body, 201).path("execution_id"), "id");
  }

  /** Kills the execution with SIGKILL and evicts it; one already gone is not an error. */
  void kill(String boxId, String execId) throws IOException {
    call("DELETE", execution(boxId, execId), null, 204, 404);
  }

  /** Sends {@code signal} to the execution; one already gone is not an error. */
  void signal(String boxId, String execId, int signal) throws IOException {
    call("POST", execution(boxId, execId) + "/signal", Map.of("signal", signal), 204, 404, 409);
  }

  /** Opens the execution's attach WebSocket, its messages going to {@code listener}. */
  WebSocket attach(String boxId, String execId, WebSocket.Listener listener) throws IOException {
    URI uri = URI.create(base.replaceFirst("^http", "ws") + execution(boxId, execId) + "/attach");
    try {
      return http.newWebSocketBuilder()
          .header("Authorization", "Bearer " + token)
          .connectTimeout(ATTACH_TIMEOUT)
          .buildAsync(uri, listener)
          .get(ATTACH_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IOException("attaching to execution " + execId + " failed: " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new IOException("attaching to execution " + execId + " timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while attaching to execution " + execId, e);
    }
  }

  private static String box(String boxId) {
    return "/boxes/" + boxId;
  }

  private static String execution(String boxId, String execId) {
    return box(boxId) + "/executions/" + execId;
  }

  private static String checkedId(JsonNode node, String field) throws IOException {
    String id = node.asText("");
    if (!ID.matcher(id).matches()) {
      throw new IOException("the BoxLite server answered a malformed " + field);
    }
    return id;
  }

  private JsonNode call(String method, String path, @Nullable Object body, int... accepted)
      throws IOException {
    Answer answer = send(method, path, body);
    if (IntStream.of(accepted).noneMatch(ok -> ok == answer.status())) {
      throw new Refused(
          method + " /v1" + path.replaceAll("\\?.*", ""), answer.status(), message(answer.bytes()));
    }
    return answer.bytes().length == 0 || answer.status() >= 400
        ? JSON.createObjectNode()
        : JSON.readTree(answer.bytes());
  }

  /** An answer's status and its body, read up to {@link #MAX_ANSWER_BYTES}. */
  private record Answer(int status, byte[] bytes) {}

  private Answer send(String method, String path, @Nullable Object body) throws IOException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(CALL_TIMEOUT)
            .header("Authorization", "Bearer " + token)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)))
            .build();
    try {
      HttpResponse<InputStream> response =
          http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream in = response.body()) {
        return new Answer(response.statusCode(), in.readNBytes(MAX_ANSWER_BYTES));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while calling the BoxLite server", e);
    }
  }

  /** The message of an error answer ({@code {"error": {"message": ...}}}), short and printable. */
  private static String message(byte[] bytes) {
    String text;
    try {
      JsonNode message = JSON.readTree(bytes).path("error").path("message");
      text = message.isTextual() ? message.asText() : new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      text = new String(bytes, StandardCharsets.UTF_8);
    }
    return Printable.excerpt(text);
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }
}
