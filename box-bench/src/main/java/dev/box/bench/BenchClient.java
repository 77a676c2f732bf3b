package dev.box.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxJson;
import java.io.IOException;
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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The benchmark's view of the Box HTTP API and the stdio relay: one shared HTTP/1.1 client, which
 * also opens the relay's WebSockets, and a record of every session it may have created so that
 * {@link #deleteAll()} leaves none behind. Thread-safe.
 *
 * <p>Every unexpected answer is an {@link IllegalStateException} naming the request and quoting the
 * response, so that a misbehaving server is reported precisely.
 */
final class BenchClient {
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
  private static final Pattern FULL_POOL = Pattern.compile("(\\d+) of (\\d+) ");
  private static final Duration POOL_WAIT = Duration.ofSeconds(30);
  private static final String EXEC_TRUE = "{\"cmd\":\"true\"}";

  private final HttpClient http;
  private final String base;
  private final String wsBase;
  private final @Nullable String authorization;
  private final ObjectMapper mapper = BoxJson.newMapper();
  private final Set<String> live = ConcurrentHashMap.newKeySet();

  /**
   * A client of the server on 127.0.0.1:{@code port}.
   *
   * @param token the server's control token, or null for a server without one
   */
  BenchClient(int port, @Nullable String token) {
    this.base = "http://127.0.0.1:" + port;
    this.wsBase = "ws://127.0.0.1:" + port;
    this.authorization = token == null ? null : "Bearer " + token;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
  }

  /** Creates the session {@code id} with the default spec (network off). */
  void create(String id) throws IOException, InterruptedException {
    live.add(id);
    send("POST", sessionPath(id), "{}", 201);
  }

  /** Runs {@code true} in the session {@code id}, creating it when it does not exist. */
  void execTrue(String id) throws IOException, InterruptedException {
    execRequest(id, EXEC_TRUE);
  }

  /**
   * Runs {@code true} in the session {@code id}, creating it with the session fields {@code
   * sessionFields} (JSON members, without braces) when it does not exist.
   */
  void execTrue(String id, String sessionFields) throws IOException, InterruptedException {
    execRequest(id, "{\"cmd\":\"true\"," + sessionFields + "}");
  }

  /**
   * Runs {@code cmd} in the session {@code id} (created when it does not exist) with a timeout of
   * {@code timeoutSec}; anything but exit code 0 throws.
   */
  void run(String id, String cmd, int timeoutSec) throws IOException, InterruptedException {
    ObjectNode request = mapper.createObjectNode().put("cmd", cmd).put("timeout_sec", timeoutSec);
    execRequest(id, mapper.writeValueAsString(request));
  }

  /**
   * As {@link #run(String, String, int)}, the session created with a writable root ({@code
   * read_only_rootfs: false}) when it does not exist.
   */
  void runWritable(String id, String cmd, int timeoutSec) throws IOException, InterruptedException {
    ObjectNode request =
        mapper
            .createObjectNode()
            .put("cmd", cmd)
            .put("timeout_sec", timeoutSec)
            .put("read_only_rootfs", false);
    execRequest(id, mapper.writeValueAsString(request));
  }

  /** Creates the session {@code id} from the snapshot {@code snapshot}. */
  void createFrom(String id, String snapshot) throws IOException, InterruptedException {
    createFrom(id, snapshot, true);
  }

  /**
   * Creates the session {@code id} from the snapshot {@code snapshot}, with a read-only root or
   * not.
   */
  void createFrom(String id, String snapshot, boolean readOnlyRoot)
      throws IOException, InterruptedException {
    live.add(id);
    String body =
        mapper.writeValueAsString(
            Map.of("from_snapshot", snapshot, "read_only_rootfs", readOnlyRoot));
    send("POST", sessionPath(id), body, 201);
  }

  /** Forks the session {@code source} as the new session {@code id}. */
  void fork(String source, String id) throws IOException, InterruptedException {
    live.add(id);
    String body = mapper.writeValueAsString(Map.of("session_id", id));
    send("POST", sessionPath(source) + "/fork", body, 201);
  }

  /** Takes the snapshot {@code name} of the session {@code id}'s workspace. */
  void snapshot(String id, String name) throws IOException, InterruptedException {
    String body = mapper.writeValueAsString(Map.of("name", name));
    send("POST", sessionPath(id) + "/snapshots", body, 201);
  }

  /** Deletes the snapshot {@code name}. */
  void deleteSnapshot(String name) throws IOException, InterruptedException {
    send("DELETE", "/v1/snapshots/" + URLEncoder.encode(name, StandardCharsets.UTF_8), "", 204);
  }

  private void execRequest(String id, String request) throws IOException, InterruptedException {
    live.add(id);
    String path = sessionPath(id) + "/exec";
    String body = send("POST", path, request, 200);
    JsonNode result = mapper.readTree(body);
    if (!result.path("status").asText().equals("completed")
        || result.path("exit_code").asInt(-1) != 0) {
      throw unexpected("POST", path, request, 200, body);
    }
  }

  /**
   * Times {@code exec true} in one session made for the measurement and deleted after it ("warm").
   */
  Latencies warmExecs(int warmup, int iterations) throws IOException, InterruptedException {
    create("warm");
    Latencies warm = Sampler.measure(warmup, iterations, i -> execTrue("warm"));
    delete("warm");
    return warm;
  }

  /**
   * Times {@code exec true} in a session the exec itself creates ("cold"); each session is deleted
   * after its exec, untimed.
   */
  Latencies coldExecs(int warmup, int iterations) throws IOException, InterruptedException {
    return Sampler.measure(
        warmup, iterations, i -> execTrue(benchId("x", i)), i -> delete(benchId("x", i)));
  }

  /** The id of a bench session of {@code kind}: warm-up iterations get a {@code w}. */
  static String benchId(String kind, int iteration) {
    return "bench-" + kind + (iteration < 0 ? "w" + -iteration : Integer.toString(iteration));
  }

  /**
   * Starts {@code argv} as the managed process {@code processId} in the existing session {@code
   * id}.
   */
  void startProcess(String id, String processId, List<String> argv)
      throws IOException, InterruptedException {
    ObjectNode spec = mapper.createObjectNode().put("process_id", processId);
    spec.put("command", argv.get(0)).set("args", mapper.valueToTree(argv.subList(1, argv.size())));
    send("POST", sessionPath(id) + "/managed-process", mapper.writeValueAsString(spec), 201);
  }

  /**
   * Attaches {@code listener} to the stdio relay of the managed process {@code processId}.
   *
   * @param query the query string with its {@code ?}, or empty for the line mode
   */
  WebSocket relay(String id, String processId, String query, WebSocket.Listener listener)
      throws IOException, InterruptedException {
    URI uri = URI.create(wsBase + relayPath(id, processId) + query);
    try {
      WebSocket.Builder builder = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10));
      if (authorization != null) {
        builder.header("Authorization", authorization);
      }
      return builder.buildAsync(uri, listener).get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new IOException("could not attach to " + uri + ": " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new IOException("could not attach to " + uri + " within " + REQUEST_TIMEOUT, e);
    }
  }

  /** Deletes the session {@code id}. */
  void delete(String id) throws IOException, InterruptedException {
    send("DELETE", sessionPath(id), "", 200);
    live.remove(id);
  }

  /**
   * Waits (up to 30 s) until {@code GET /v1/health} says every pre-started sandbox waits ({@code
   * enforced.pool} "N of N ..."); returns at once on a server without a pool.
   */
  void awaitPoolFull() throws IOException, InterruptedException {
    awaitPoolFull(POOL_WAIT);
  }

  /** As {@link #awaitPoolFull()}, waiting up to {@code patience}: a VM's boot takes seconds. */
  void awaitPoolFull(Duration patience) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    while (true) {
      String pool =
          mapper
              .readTree(send("GET", "/v1/health", "", 200))
              .path("enforced")
              .path("pool")
              .asText();
      Matcher m = FULL_POOL.matcher(pool);
      if (!m.lookingAt() || m.group(1).equals(m.group(2))) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IOException("the pool did not refill within " + patience + ": " + pool);
      }
      Thread.sleep(2);
    }
  }

  /** The answer of {@code GET /v1/health}. */
  JsonNode health() throws IOException, InterruptedException {
    return mapper.readTree(send("GET", "/v1/health", "", 200));
  }

  /** The answer of {@code GET /v1/status}. */
  JsonNode status() throws IOException, InterruptedException {
    return mapper.readTree(send("GET", "/v1/status", "", 200));
  }

  /**
   * Deletes every session this client may have created and not deleted; a session the server does
   * not know is gone already.
   *
   * @return one line for each session that could not be deleted
   */
  List<String> deleteAll() {
    List<String> failures = new ArrayList<>();
    for (String id : List.copyOf(live)) {
      try {
        HttpResponse<String> response = exchange("DELETE", sessionPath(id), "");
        if (response.statusCode() != 200 && response.statusCode() != 404) {
          failures.add(
              describe("DELETE", sessionPath(id), "", response.statusCode(), response.body()));
        }
        live.remove(id);
      } catch (IOException e) {
        failures.add("DELETE " + sessionPath(id) + " failed: " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failures.add("interrupted while deleting sessions; left: " + live);
        break;
      }
    }
    return failures;
  }

  /** Sends a request and returns the answer's body; any status but {@code expected} throws. */
  private String send(String method, String path, String body, int expected)
      throws IOException, InterruptedException {
    HttpResponse<String> response = exchange(method, path, body);
    if (response.statusCode() != expected) {
      throw unexpected(method, path, body, response.statusCode(), response.body());
    }
    return response.body();
  }

  private HttpResponse<String> exchange(String method, String path, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(REQUEST_TIMEOUT)
            .header("Content-Type", "application/json")
            .method(
                method,
                body.isEmpty()
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String sessionPath(String id) {
    return "/v1/sessions/" + URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  private static String relayPath(String id, String processId) {
    return sessionPath(id)
        + "/managed-process/"
        + URLEncoder.encode(processId, StandardCharsets.UTF_8)
        + "/ws";
  }

  private static IllegalStateException unexpected(
      String method, String path, String body, int status, String responseBody) {
    return new IllegalStateException(
        "unexpected answer from Box: " + describe(method, path, body, status, responseBody));
  }

  private static String describe(
      String method, String path, String body, int status, String responseBody) {
    return method
        + " "
        + path
        + (body.isEmpty() ? "" : " " + body)
        + " -> "
        + status
        + " "
        + responseBody;
  }
}
