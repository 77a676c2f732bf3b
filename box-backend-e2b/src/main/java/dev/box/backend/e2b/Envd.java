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
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The envd daemon of one sandbox: its Connect-RPC process service (JSON codec; {@code Start} as a
 * server stream of enveloped messages, the rest unary) and its HTTP {@code /files} routes. The user
 * a call acts as travels as envd expects it, in HTTP Basic authentication with an empty password;
 * the sandbox's access token, when it has one, in {@code X-Access-Token}.
 */
final class Envd {
  /** The most one streamed message (an output chunk) may hold. */
  static final int MAX_MESSAGE_BYTES = 4 << 20;

  /** The user commands run as: E2B templates' unprivileged user. */
  static final String USER = "user";

  /** The user that prepares mount points. */
  static final String ROOT = "root";

  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final String baseUrl;
  private final @Nullable String accessToken;

  Envd(HttpClient http, String baseUrl, @Nullable String accessToken) {
    this.http = http;
    this.baseUrl = baseUrl;
    this.accessToken = accessToken;
  }

  /** An open {@code Start} stream; {@link #next} reads its events. */
  static final class Stream implements AutoCloseable {
    private final InputStream in;

    private Stream(InputStream in) {
      this.in = in;
    }

    /**
     * The next event, or null at the end of the stream.
     *
     * @throws IOException when the stream breaks, or ends with an error
     */
    @Nullable ProcessEvent next() throws IOException {
      ConnectEnvelope envelope = ConnectEnvelope.read(in, MAX_MESSAGE_BYTES);
      if (envelope == null) {
        throw new IOException("the process stream ended without its end-of-stream message");
      }
      JsonNode message = JSON.readTree(envelope.payload());
      if ((envelope.flags() & ConnectEnvelope.END_STREAM) != 0) {
        JsonNode error = message.path("error");
        if (!error.isMissingNode() && !error.isNull()) {
          throw new IOException(
              "envd: "
                  + error.path("code").asText("unknown")
                  + ": "
                  + Printable.excerpt(
                      error.path("message").asText("").getBytes(StandardCharsets.UTF_8)));
        }
        return null;
      }
      return ProcessEvent.parse(message);
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  /** Starts {@code cmd args} as {@code user} with {@code envs}, in {@code cwd}. */
  Stream start(
      String user,
      String cmd,
      List<String> args,
      Map<String, String> envs,
      String cwd,
      boolean stdin)
      throws IOException {
    Map<String, Object> process = new LinkedHashMap<>();
    process.put("cmd", cmd);
    process.put("args", args);
    process.put("envs", envs);
    process.put("cwd", cwd);
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("process", process);
    request.put("stdin", stdin);
    byte[] body = ConnectEnvelope.frame(0, JSON.writeValueAsBytes(request));
    HttpResponse<InputStream> response =
        send(
            rpc(user, "Start")
                // Until the response's headers: the stream itself lasts as long as the process.
                .timeout(CALL_TIMEOUT)
                .header("Content-Type", "application/connect+json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build());
    if (response.statusCode() != 200) {
      byte[] answer;
      try (InputStream in = response.body()) {
        answer = in.readNBytes(4096);
      }
      throw new IOException(
          "envd refused to start a process ("
              + response.statusCode()
              + "): "
              + Printable.excerpt(answer));
    }
    return new Stream(response.body());
  }

  /** Sends {@code signal} ({@code SIGNAL_SIGTERM} or {@code SIGNAL_SIGKILL}) to {@code pid}. */
  void sendSignal(int pid, String signal) throws IOException {
    unary("SendSignal", Map.of("process", Map.of("pid", pid), "signal", signal));
  }

  /** Writes {@code bytes} to the stdin of {@code pid}. */
  void sendInput(int pid, byte[] bytes) throws IOException {
    unary(
        "SendInput",
        Map.of(
            "process",
            Map.of("pid", pid),
            "input",
            Map.of("stdin", Base64.getEncoder().encodeToString(bytes))));
  }

  /** Closes the stdin of {@code pid}. */
  void closeStdin(int pid) throws IOException {
    unary("CloseStdin", Map.of("process", Map.of("pid", pid)));
  }

  /** Writes {@code content} to the absolute {@code path}, creating its parents, as {@code user}. */
  void upload(String user, String path, byte[] content) throws IOException {
    HttpRequest request =
        files(user, path)
            .header("Content-Type", "application/octet-stream")
            .POST(HttpRequest.BodyPublishers.ofByteArray(content))
            .build();
    HttpResponse<InputStream> response = send(request);
    byte[] answer;
    try (InputStream in = response.body()) {
      answer = in.readNBytes(4096);
    }
    if (response.statusCode() != 200) {
      throw answered("upload of " + path, response.statusCode(), answer);
    }
  }

  /**
   * Reads the file at the absolute {@code path}, or null when it does not exist.
   *
   * @throws IOException when it holds more than {@code maxBytes}, or envd refuses
   */
  byte @Nullable [] download(String path, int maxBytes) throws IOException {
    HttpResponse<InputStream> response = send(files(USER, path).GET().build());
    try (InputStream in = response.body()) {
      if (response.statusCode() == 404) {
        return null;
      }
      byte[] content = in.readNBytes(maxBytes + 1);
      if (response.statusCode() != 200) {
        throw answered("download of " + path, response.statusCode(), content);
      }
      if (content.length > maxBytes) {
        throw new IOException(path + " holds more than " + maxBytes + " bytes");
      }
      return content;
    }
  }

  private void unary(String method, Map<String, Object> message) throws IOException {
    HttpResponse<InputStream> response =
        send(
            rpc(USER, method)
                .timeout(CALL_TIMEOUT)
                .header("Content-Type", "application/json")
                .header("Connect-Protocol-Version", "1")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(message)))
                .build());
    byte[] answer;
    try (InputStream in = response.body()) {
      answer = in.readNBytes(64 * 1024);
    }
    if (response.statusCode() != 200) {
      throw answered("envd " + method, response.statusCode(), answer);
    }
  }

  /** The failure of {@code what}, which envd answered with {@code status} and {@code answer}. */
  private static IOException answered(String what, int status, byte[] answer) {
    return new IOException(what + " answered " + status + ": " + Printable.excerpt(answer));
  }

  private HttpRequest.Builder rpc(String user, String method) {
    return authorised(
        HttpRequest.newBuilder(URI.create(baseUrl + "/process.Process/" + method)), user);
  }

  private HttpRequest.Builder files(String user, String path) {
    String query =
        "?path="
            + URLEncoder.encode(path, StandardCharsets.UTF_8)
            + "&username="
            + URLEncoder.encode(user, StandardCharsets.UTF_8);
    return authorised(HttpRequest.newBuilder(URI.create(baseUrl + "/files" + query)), user)
        .timeout(CALL_TIMEOUT);
  }

  private HttpRequest.Builder authorised(HttpRequest.Builder request, String user) {
    String basic =
        Base64.getEncoder().encodeToString((user + ":").getBytes(StandardCharsets.UTF_8));
    request.header("Authorization", "Basic " + basic);
    if (accessToken != null) {
      request.header("X-Access-Token", accessToken);
    }
    return request;
  }

  private HttpResponse<InputStream> send(HttpRequest request) throws IOException {
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while calling envd", e);
    }
  }
}
