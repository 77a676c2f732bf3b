package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSpec;
import dev.box.langbot.ActionDispatcher;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.jspecify.annotations.Nullable;

/**
 * Generated malformed, oversized and type-confused input against the real server: every REST route
 * (in the path and in the body), every LangBot action, and the relay's handshake. Whatever is sent,
 * the answer is never a 5xx, never a stack trace, never a body that is not JSON, and the server
 * keeps serving.
 */
class ApiFuzzTest {
  private static final String TOKEN = LangBotServers.TOKEN;
  private static final String INSTANCE = LangBotServers.INSTANCE;
  private static final ObjectMapper JSON = BoxJson.newMapper();
  private static @Nullable BoxServer server;
  private static @Nullable RpcClient rpc;

  @BeforeContainer
  static void start() throws IOException {
    server =
        LangBotServers.start(
            Map.of("backend", "bwrap", "max_sessions", "8"), LangBotServers.ENV, false);
    rpc =
        RpcClient.connect(
            server().port(),
            Map.of("X-LangBot-Box-Control-Token", TOKEN, "X-LangBot-Instance-Id", INSTANCE));
  }

  @AfterContainer
  static void stop() {
    BoxServer running = server;
    if (running == null) {
      return;
    }
    try {
      // Still serving after everything it was fed, and nothing it started is left behind.
      assertThat(get("/healthz").status).isEqualTo(200);
      for (BoxSessionInfo session : running.sessions().list()) {
        running.sessions().delete(session.sessionId());
      }
      assertThat(running.sessions().list()).isEmpty();
    } catch (IOException e) {
      throw new AssertionError("the server stopped answering", e);
    } finally {
      if (rpc != null) {
        rpc.close();
      }
      running.close();
    }
  }

  private static BoxServer server() {
    BoxServer running = server;
    if (running == null) {
      throw new IllegalStateException("not started");
    }
    return running;
  }

  // ---- REST ----

  @Property(tries = 300)
  void restRoutes_neverAnswer5xx_norAnythingButJson(
      @ForAll("methods") String method, @ForAll("paths") String path, @ForAll("bodies") String body)
      throws IOException {
    Answer answer = request(method, path, body);

    assertThat(answer.status).as(method + " " + path).isLessThan(500);
    if (answer.status >= 400) {
      assertThat(answer.contentType)
          .as(method + " " + path + " -> " + answer.status + " " + answer.body)
          .startsWith("application/json");
      JsonNode error = JSON.readTree(answer.body);
      assertThat(error.path("error").path("code").asText()).isNotEmpty();
    }
    assertThat(answer.body).doesNotContain("Exception").doesNotContain("\tat ");
  }

  @Provide
  Arbitrary<String> methods() {
    return Arbitraries.of("GET", "POST", "DELETE", "PUT", "PATCH");
  }

  @Provide
  Arbitrary<String> paths() {
    Arbitrary<String> template =
        Arbitraries.of(
            "/v1/sessions/{id}",
            "/v1/sessions/{id}/exec",
            "/v1/sessions/{id}/pause",
            "/v1/sessions/{id}/resume",
            "/v1/sessions/{id}/managed-process",
            "/v1/sessions/{id}/managed-process/{pid}",
            "/v1/sessions",
            "/v1/status",
            "/v1/health",
            "/readyz",
            "/rpc/ws",
            "/{id}");
    return Combinators.combine(template, segments(), segments())
        .as((t, id, pid) -> t.replace("{id}", id).replace("{pid}", pid));
  }

  /** Path segments: ordinary, empty, encoded oddities, traversal, control bytes, very long. */
  private static Arbitrary<String> segments() {
    return Arbitraries.oneOf(
        Arbitraries.strings().alpha().numeric().withChars("-_.").ofMaxLength(20),
        Arbitraries.of(
            "",
            "%00",
            "..",
            "%2e%2e",
            "..%2f..%2fetc",
            "%zz",
            "%",
            "%c0%af",
            "a%2Fb",
            "%ff%fe",
            "%e2%80%ae",
            "default",
            "%20",
            "~root",
            "$(id)",
            "%0d%0aX-Injected:%201"),
        Arbitraries.strings().ascii().ofMaxLength(30).map(ApiFuzzTest::percentEncode),
        Arbitraries.strings().withChars('a').ofMinLength(200).ofMaxLength(3000));
  }

  @Provide
  Arbitrary<String> bodies() {
    return Arbitraries.oneOf(
        Arbitraries.of(
            "",
            "{",
            "null",
            "[]",
            "\"cmd\"",
            "{\"cmd\": null}",
            "{\"cmd\": {\"a\": 1}}",
            "[".repeat(5000) + "]".repeat(5000),
            "{\"cmd\": \"" + "x".repeat(200_000) + "\"}",
            "\u0000\u0001\u0002",
            "{\"cmd\": \"true\", \"timeout_sec\": 1e308}",
            "{\"cmd\": \"true\", \"env\": {\"A\": {\"B\": 1}}}"),
        specs());
  }

  /** Spec-shaped objects whose fields take values of every type, in and out of range. */
  private static Arbitrary<String> specs() {
    Arbitrary<String> value =
        oddValues(
            "1",
            "2147483648",
            "-9223372036854775809",
            "\"on\"",
            "\"off\"",
            "\"rw\"",
            "\"/etc\"",
            "\"/tmp\"",
            "\"../..\"",
            "\"\\u0000\"",
            "[\"a\", 1]",
            "{\"k\": [1]}");
    Arbitrary<String> field =
        Arbitraries.of(
            Stream.concat(
                    specFieldNames(),
                    Stream.of("command", "args", "process_id", "stdin", "unknown_field"))
                .toList());
    return Combinators.combine(field, value)
        .as((f, v) -> "\"" + f + "\": " + v)
        .list()
        .ofMaxSize(6)
        .map(pairs -> "{\"cmd\": \"true\", " + String.join(", ", pairs) + "}")
        .map(s -> s.replace(", }", "}"));
  }

  /** The field names of a spec as the wire writes it, from {@link BoxSpec}'s own JSON form. */
  private static Stream<String> specFieldNames() {
    JsonNode spec = JSON.valueToTree(BoxSpec.builder("s").build());
    return spec.properties().stream().map(Map.Entry::getKey);
  }

  /**
   * JSON values of every type, each the wrong one for most fields, and then {@code more}: the
   * values the generated objects give their fields.
   */
  private static Arbitrary<String> oddValues(String... more) {
    List<String> values =
        new ArrayList<>(List.of("null", "true", "-1", "0", "1.5", "\"\"", "[]", "{}"));
    values.addAll(List.of(more));
    return Arbitraries.of(values);
  }

  // ---- LangBot actions ----

  @Property(tries = 300)
  void langBotActions_answerEveryInputWithAnErrorOfTheirOwn_neverAnInternalOne(
      @ForAll("actions") String action,
      @ForAll("actionData") String data,
      @ForAll("contexts") @Nullable String context) {
    RpcClient client = rpc;
    if (client == null) {
      throw new IllegalStateException("not started");
    }
    JsonNode response = client.call(action, data, context);

    assertThat(response.path("code").asInt(-1)).as(action + " " + data).isIn(0, 1);
    String message = response.path("message").asText();
    assertThat(message).as(action + " " + data).doesNotContain("internal error");
    assertThat(message).doesNotContain("\tat ").doesNotContain("Exception:");
  }

  @Provide
  Arbitrary<String> actions() {
    // box_shutdown is left out: it ends every session, which the other properties rely on.
    return Arbitraries.of(
        Stream.concat(
                ActionDispatcher.ACTIONS.stream().filter(a -> !a.equals("box_shutdown")),
                Stream.of("no_such_action", ""))
            .toList());
  }

  @Provide
  Arbitrary<String> actionData() {
    Arbitrary<String> value =
        oddValues(
            "99999999999",
            "\"x\"",
            "\"../../etc\"",
            "\"/etc/passwd\"",
            "{\"command\": 1}",
            "\"" + "y".repeat(5000) + "\"",
            "\"2026-01-01T00:00:00\"",
            "{\"required\": \"yes\"}",
            "{\"max_sessions\": -5}");
    Arbitrary<String> field =
        Arbitraries.of(
            "session_id",
            "cmd",
            "spec",
            "process_id",
            "name",
            "path",
            "content",
            "skill",
            "file_key",
            "file_length",
            "chunk_base64",
            "chunk_index",
            "chunk_amount",
            "chunk_size",
            "limits",
            "local",
            "backend",
            "instance_uuid",
            "workspace_uuid",
            "execution_generation",
            "entitlement_revision",
            "expires_at",
            "marker_name",
            "max_entries",
            "source_paths",
            "timeout_sec",
            "host_path",
            "network");
    return Arbitraries.oneOf(
        Arbitraries.of("{}", "[]", "null", "\"text\"", "7"),
        Combinators.combine(field, value)
            .as((f, v) -> "\"" + f + "\": " + v)
            .list()
            .ofMaxSize(5)
            .map(pairs -> "{" + String.join(", ", pairs) + "}"));
  }

  @Provide
  Arbitrary<@Nullable String> contexts() {
    return Arbitraries.of(
        null,
        "{\"instance_uuid\": \"" + INSTANCE + "\", \"workspace_uuid\": \"w\"}",
        "{\"instance_uuid\": \""
            + INSTANCE
            + "\", \"workspace_uuid\": \"w\", \"placement_generation\": 1}",
        "{\"instance_uuid\": \""
            + INSTANCE
            + "\", \"workspace_uuid\": \"\", \"placement_generation\": 1}",
        "{\"instance_uuid\": \"other\", \"workspace_uuid\": \"w\", \"placement_generation\": 1}",
        "{\"instance_uuid\": \""
            + INSTANCE
            + "\", \"workspace_uuid\": \"w\", \"placement_generation\": \"x\"}",
        "{\"instance_uuid\": \"" + INSTANCE + "\", \"workspace_uuid\": \"w\", \"extra\": 1}",
        "[]",
        "\"ctx\"");
  }

  // ---- the relay's handshake ----

  @Property(tries = 150)
  void relayHandshakes_areRefusedWithoutA5xx(
      @ForAll("segmentsArbitrary") String id,
      @ForAll("segmentsArbitrary") String pid,
      @ForAll("relayHeaders") Map<String, String> headers)
      throws IOException {
    StringBuilder raw = new StringBuilder();
    raw.append("GET /v1/sessions/")
        .append(id)
        .append("/managed-process/")
        .append(pid)
        .append("/ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
        .append("Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n");
    headers.forEach((k, v) -> raw.append(k).append(": ").append(v).append("\r\n"));
    raw.append("\r\n");
    Answer answer = exchange(raw.toString().getBytes(StandardCharsets.UTF_8));

    assertThat(answer.status).as(id + " " + pid + " " + headers).isBetween(400, 499);
    assertThat(answer.body).doesNotContain("Exception").doesNotContain("<html");
  }

  @Provide
  Arbitrary<String> segmentsArbitrary() {
    return segments().filter(s -> s.length() < 500);
  }

  @Provide
  Arbitrary<Map<String, String>> relayHeaders() {
    Arbitrary<String> name =
        Arbitraries.of(
            "X-LangBot-Box-Control-Token",
            "X-LangBot-Instance-Id",
            "X-LangBot-Workspace-Id",
            "X-LangBot-Placement-Generation",
            "Authorization");
    Arbitrary<String> value =
        Arbitraries.of(
            TOKEN,
            "Bearer " + TOKEN,
            INSTANCE,
            "w",
            "1",
            "0",
            "-1",
            "99999999999999999999",
            "x".repeat(300),
            "",
            "Bearer",
            "\u00e9");
    return Arbitraries.maps(name, value).ofMaxSize(5);
  }

  // ---- a raw HTTP/1.1 client: the JDK's refuses many of the requests above ----

  private record Answer(int status, String contentType, String body) {}

  private static Answer get(String path) throws IOException {
    return request("GET", path, "");
  }

  private static Answer request(String method, String path, String body) throws IOException {
    byte[] content = body.getBytes(StandardCharsets.UTF_8);
    String head =
        method
            + " "
            + path
            + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
            + TOKEN
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + content.length
            + "\r\nConnection: close\r\n\r\n";
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    request.writeBytes(head.getBytes(StandardCharsets.UTF_8));
    request.writeBytes(content);
    return exchange(request.toByteArray());
  }

  private static Answer exchange(byte[] request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", server().port())) {
      socket.setSoTimeout(60_000);
      OutputStream out = socket.getOutputStream();
      try {
        out.write(request);
        out.flush();
      } catch (IOException e) {
        // The server may answer and close before reading a body it refuses; read that answer.
      }
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      int matched = 0;
      while (matched < 4) {
        int b = in.read();
        assertThat(b).as("a complete HTTP answer: " + head).isNotNegative();
        head.write(b);
        matched = (b == '\r' || b == '\n') ? matched + 1 : 0;
      }
      String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
      int status = Integer.parseInt(lines[0].split(" ")[1]);
      String type = "";
      boolean chunked = false;
      int length = -1;
      for (String line : lines) {
        String lower = line.toLowerCase(Locale.ROOT);
        if (lower.startsWith("content-type:")) {
          type = line.substring("content-type:".length()).strip();
        } else if (lower.startsWith("content-length:")) {
          length = Integer.parseInt(line.substring("content-length:".length()).strip());
        }
        chunked |= lower.startsWith("transfer-encoding:") && lower.contains("chunked");
      }
      byte[] body;
      if (chunked) {
        body = dechunk(in);
      } else if (length >= 0) {
        body = in.readNBytes(length);
      } else if (status == 101) {
        body = new byte[0];
      } else {
        body = in.readAllBytes();
      }
      return new Answer(status, type, new String(body, StandardCharsets.UTF_8));
    }
  }

  private static byte[] dechunk(InputStream in) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      StringBuilder sizeLine = new StringBuilder();
      for (int b = in.read(); b != '\n'; b = in.read()) {
        assertThat(b).as("a complete chunk").isNotNegative();
        sizeLine.append((char) b);
      }
      int size = Integer.parseInt(sizeLine.toString().strip(), 16);
      if (size == 0) {
        in.readNBytes(2);
        return body.toByteArray();
      }
      body.writeBytes(in.readNBytes(size));
      in.readNBytes(2);
    }
  }

  private static String percentEncode(String text) {
    StringBuilder out = new StringBuilder();
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      out.append('%').append(String.format(Locale.ROOT, "%02X", b & 0xff));
    }
    return out.toString();
  }
}
