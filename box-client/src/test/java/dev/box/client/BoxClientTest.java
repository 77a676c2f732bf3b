package dev.box.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.InstanceOfAssertFactories.type;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxBackendHealth;
import dev.box.api.BoxBackendUnavailableException;
import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxExecutionStatus;
import dev.box.api.BoxJson;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxRuntimeStatus;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The client's HTTP mapping: which request each method sends, how answers become wire types, and
 * how failures become {@link BoxException}s.
 *
 * <p>The server here is a JDK {@link com.sun.net.httpserver.HttpServer} on loopback returning
 * canned JSON, not a Box server: these tests pin the client's side of the protocol. The CLI tests
 * in box-cli run the client against a real Box server.
 */
class BoxClientTest {
  private static final String SESSION_JSON =
      """
      {"session_id": "s1", "backend_name": "bwrap", "backend_session_id": "box-s1",
       "image": "img", "network": "off", "host_path": null, "host_path_mode": "rw",
       "mount_path": "/workspace", "persistent": true, "cpus": 1.5, "memory_mb": 512,
       "pids_limit": 128, "read_only_rootfs": true, "workspace_quota_mb": 0,
       "created_at": "2025-01-02T03:04:05Z", "last_used_at": "2025-01-02T03:04:06.5Z"}
      """;

  private CannedServer server;
  private BoxClient client;

  @BeforeEach
  void start() throws IOException {
    server = CannedServer.start();
    client = BoxClient.connect(server.uri());
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void health_getsV1Health_andMapsTheAnswer() throws Exception {
    server.answer(
        200,
        """
        {"name": "bwrap", "available": true, "reason": "bubblewrap 0.9",
         "enforced": {"memory": "cgroup", "pids": "none"}}
        """);

    BoxBackendHealth health = client.health();

    assertThat(health)
        .isEqualTo(
            new BoxBackendHealth(
                "bwrap",
                true,
                "bubblewrap 0.9",
                java.util.Map.of("memory", "cgroup", "pids", "none")));
    takeRequest("GET", "/v1/health");
  }

  @Test
  void status_mapsBackendCountsAndLimits() throws Exception {
    server.answer(
        200,
        """
        {"backend": {"name": null, "available": false, "reason": "no bwrap", "enforced": {}},
         "active_sessions": 2, "managed_processes": 0, "session_ttl_sec": 300,
         "limits": {"max_sessions": 64, "allowed_mount_roots": ["/srv"]}}
        """);

    BoxRuntimeStatus status = client.status();

    assertThat(status.backend().name()).isNull();
    assertThat(status.backend().available()).isFalse();
    assertThat(status.activeSessions()).isEqualTo(2);
    assertThat(status.sessionTtlSec()).isEqualTo(300);
    assertThat(status.limits()).containsEntry("max_sessions", 64);
    assertThat(status.limits()).containsEntry("allowed_mount_roots", List.of("/srv"));
    assertThat(server.takeRequest().rawPath()).isEqualTo("/v1/status");
  }

  @Test
  void sessions_mapsEverySession() throws Exception {
    server.answer(200, "[" + SESSION_JSON + "," + SESSION_JSON.replace("\"s1\"", "\"s2\"") + "]");

    List<BoxSessionInfo> sessions = client.sessions();

    assertThat(sessions).extracting(BoxSessionInfo::sessionId).containsExactly("s1", "s2");
    BoxSessionInfo first = sessions.get(0);
    assertThat(first.network()).isEqualTo(BoxNetworkMode.OFF);
    assertThat(first.hostPath()).isNull();
    assertThat(first.cpus()).isEqualTo(1.5);
    assertThat(first.persistent()).isTrue();
    assertThat(first.createdAt()).isEqualTo(Instant.parse("2025-01-02T03:04:05Z"));
    assertThat(first.lastUsedAt()).isEqualTo(Instant.parse("2025-01-02T03:04:06.5Z"));
    assertThat(server.takeRequest().rawPath()).isEqualTo("/v1/sessions");
  }

  @Test
  void session_sendsTheIdAsOneEncodedPathSegment() throws Exception {
    server.answer(200, SESSION_JSON);

    client.session("a b/c+d?ü");

    assertThat(server.takeRequest().rawPath()).isEqualTo("/v1/sessions/a%20b%2Fc%2Bd%3F%C3%BC");
  }

  @Test
  void createSession_postsTheSpecAsSnakeCaseJson() throws Exception {
    server.answer(201, SESSION_JSON);
    BoxSpec spec =
        BoxSpec.builder("s 1").network(BoxNetworkMode.ON).timeoutSec(9).env("K", "V").build();

    BoxSessionInfo info = client.createSession(spec);

    assertThat(info.sessionId()).isEqualTo("s1");
    CannedServer.Recorded request = takeRequest("POST", "/v1/sessions/s%201");
    assertThat(request.contentType()).isEqualTo("application/json");
    JsonNode body = BoxJson.newMapper().readTree(request.body());
    assertThat(body.path("session_id").asText()).isEqualTo("s 1");
    assertThat(body.path("network").asText()).isEqualTo("on");
    assertThat(body.path("timeout_sec").asInt()).isEqualTo(9);
    assertThat(body.path("env").path("K").asText()).isEqualTo("V");
    assertThat(BoxJson.newMapper().treeToValue(body, BoxSpec.class)).isEqualTo(spec);
  }

  @Test
  void deleteSession_sendsDeleteToTheSession() throws Exception {
    server.answer(200, "{\"deleted\": \"s1\"}");

    client.deleteSession("s1");

    takeRequest("DELETE", "/v1/sessions/s1");
  }

  @Test
  void exec_postsToTheExecRoute_andMapsATimeoutWithoutExitCode() throws Exception {
    server.answer(
        200,
        """
        {"session_id": "s1", "backend_name": "bwrap", "status": "timed_out", "exit_code": null,
         "stdout": "partial\\n", "stderr": "", "duration_ms": 1003,
         "stdout_truncated_bytes": 0, "stderr_truncated_bytes": 7, "ok": false}
        """);

    BoxExecutionResult result = client.exec(BoxSpec.builder("s1").cmd("sleep 5").build());

    assertThat(result.status()).isEqualTo(BoxExecutionStatus.TIMED_OUT);
    assertThat(result.exitCode()).isNull();
    assertThat(result.stdout()).isEqualTo("partial\n");
    assertThat(result.durationMs()).isEqualTo(1003);
    assertThat(result.stderrTruncatedBytes()).isEqualTo(7);
    CannedServer.Recorded request = takeRequest("POST", "/v1/sessions/s1/exec");
    assertThat(BoxJson.newMapper().readTree(request.body()).path("cmd").asText())
        .isEqualTo("sleep 5");
  }

  @Test
  void streamedExec_asksForLines_tellsTheOutputInOrder_andReturnsTheResult() throws Exception {
    server.answer(
        200,
        "application/x-ndjson",
        """
        {"type":"stdout","data":"one\\n"}
        {"type":"stderr","data":"warn"}
        {"type":"progress","data":"a kind this client does not know"}
        {"type":"stdout","data":"two\\n"}
        {"type":"result","session_id":"s1","backend_name":"bwrap","status":"completed",        "exit_code":3,"duration_ms":12,"stdout_truncated_bytes":0,"stderr_truncated_bytes":0}
        """);
    List<String> heard = new ArrayList<>();
    ExecOutput output =
        new ExecOutput() {
          @Override
          public void stdout(String text) {
            heard.add("out:" + text);
          }

          @Override
          public void stderr(String text) {
            heard.add("err:" + text);
          }
        };

    BoxExecutionResult result = client.exec(BoxSpec.builder("s1").cmd("x").build(), output);

    assertThat(heard).containsExactly("out:one\n", "err:warn", "out:two\n");
    assertThat(result.exitCode()).isEqualTo(3);
    assertThat(result.stdout()).as("it came through the output").isEmpty();
    takeRequest("POST", "/v1/sessions/s1/exec");
  }

  @Test
  void streamedExec_endedByAnErrorLine_throwsItsError_andOneWithoutAResult_isUnavailable() {
    ExecOutput none =
        new ExecOutput() {
          @Override
          public void stdout(String text) {}

          @Override
          public void stderr(String text) {}
        };
    BoxSpec spec = BoxSpec.builder("s1").cmd("x").build();
    server.answer(
        200,
        "application/x-ndjson",
        """
        {"type":"error","error":{"code":"runtime_unavailable","message":"the sandbox ended"}}
        """);
    assertThatThrownBy(() -> client.exec(spec, none))
        .isInstanceOf(BoxRuntimeUnavailableException.class)
        .hasMessageContaining("the sandbox ended");

    server.answer(200, "application/x-ndjson", "{\"type\":\"stdout\",\"data\":\"cut\"}\n");
    assertThatThrownBy(() -> client.exec(spec, none))
        .isInstanceOf(BoxException.class)
        .hasMessageContaining("ended without a result");
  }

  @Test
  void exec_waitsForTheSpecTimeoutOnTopOfTheRequestTimeout() {
    String completed =
        """
        {"session_id": "s1", "backend_name": "bwrap", "status": "completed", "exit_code": 0,
         "stdout": "", "stderr": "", "duration_ms": 400,
         "stdout_truncated_bytes": 0, "stderr_truncated_bytes": 0}
        """;
    server.answerAfter(Duration.ofMillis(400), completed);
    try (BoxClient impatient =
        BoxClient.builder(server.uri()).requestTimeout(Duration.ofMillis(150)).build()) {

      assertThat(impatient.exec(BoxSpec.builder("s1").cmd("true").timeoutSec(1).build()).ok())
          .isTrue();
      assertThatThrownBy(impatient::health)
          .isInstanceOf(BoxRuntimeUnavailableException.class)
          .hasCauseInstanceOf(HttpTimeoutException.class);
    }
  }

  @ParameterizedTest
  @CsvSource({
    "404, session_not_found",
    "400, validation_error",
    "409, session_conflict",
    "429, capacity_exceeded",
    "503, backend_unavailable",
    "503, runtime_unavailable",
    "401, unauthorized",
    "500, internal_error",
  })
  void errorBody_becomesTheExceptionTheServerRaised(int status, String code) {
    server.answer(status, "{\"error\": {\"code\": \"" + code + "\", \"message\": \"it broke\"}}");

    assertThatThrownBy(() -> client.session("s1"))
        .isExactlyInstanceOf(expectedType(code))
        .hasMessage("it broke")
        .asInstanceOf(type(BoxException.class))
        .extracting(BoxException::code)
        .isEqualTo(BoxErrorCode.fromWire(code));
  }

  private static Class<? extends BoxException> expectedType(String code) {
    return switch (code) {
      case "session_not_found" -> BoxSessionNotFoundException.class;
      case "validation_error" -> BoxValidationException.class;
      case "session_conflict" -> BoxSessionConflictException.class;
      case "capacity_exceeded" -> BoxCapacityExceededException.class;
      case "backend_unavailable" -> BoxBackendUnavailableException.class;
      case "runtime_unavailable" -> BoxRuntimeUnavailableException.class;
      default -> BoxException.class;
    };
  }

  @Test
  void errorBody_withACodeThisVersionDoesNotKnow_isAnInternalError() {
    server.answer(418, "{\"error\": {\"code\": \"teapot\", \"message\": \"short and stout\"}}");

    assertThatThrownBy(client::health)
        .isExactlyInstanceOf(BoxException.class)
        .hasMessage("short and stout")
        .extracting(e -> ((BoxException) e).code())
        .isEqualTo(BoxErrorCode.INTERNAL_ERROR);
  }

  @ParameterizedTest
  @CsvSource({
    "502, RUNTIME_UNAVAILABLE",
    "404, NOT_FOUND",
    "403, UNAUTHORIZED",
    "500, INTERNAL_ERROR",
    "422, VALIDATION_ERROR",
  })
  void nonJsonErrorBody_takesItsCodeFromTheStatus(int status, BoxErrorCode code) {
    server.answer(status, "text/html", "<html><body>Bad\n  Gateway</body></html>");

    assertThatThrownBy(client::health)
        .isInstanceOf(BoxException.class)
        .hasMessage(
            "HTTP "
                + status
                + " to GET "
                + server.uri()
                + "/v1/health with a body that is not a Box error:"
                + " <html><body>Bad Gateway</body></html>")
        .extracting(e -> ((BoxException) e).code())
        .isEqualTo(code);
  }

  @Test
  void jsonErrorBodyOfAnotherShape_andEmptyBody_takeTheirCodeFromTheStatus() {
    server.answer(404, "{\"detail\": \"Not Found\"}");
    assertThatThrownBy(client::health)
        .extracting(e -> ((BoxException) e).code())
        .isEqualTo(BoxErrorCode.NOT_FOUND);

    server.answer(503, "");
    assertThatThrownBy(client::health)
        .isInstanceOf(BoxRuntimeUnavailableException.class)
        .hasMessageEndingWith("/v1/health with an empty body");
  }

  @Test
  void successBodyThatIsNotTheWireType_isAnInternalError() {
    server.answer(200, "text/html", "<html>a web server, not Box</html>");

    assertThatThrownBy(client::health)
        .isInstanceOf(BoxException.class)
        .hasMessageStartingWith("unexpected answer to GET " + server.uri() + "/v1/health: ")
        .extracting(e -> ((BoxException) e).code())
        .isEqualTo(BoxErrorCode.INTERNAL_ERROR);
  }

  @Test
  void controlToken_isSentAsBearerAuthorization() throws Exception {
    server.answer(200, "[]");
    try (BoxClient withToken = BoxClient.builder(server.uri()).controlToken(" s3cret\n").build()) {
      withToken.sessions();
    }
    client.sessions();

    assertThat(server.takeRequest().authorization()).isEqualTo("Bearer s3cret");
    assertThat(server.takeRequest().authorization()).isNull();
  }

  @Test
  void baseUriWithAPathPrefix_keepsThePrefix() throws Exception {
    server.answer(200, "[]");
    try (BoxClient proxied = BoxClient.connect(URI.create(server.uri() + "/box/"))) {
      proxied.sessions();
    }

    assertThat(server.takeRequest().rawPath()).isEqualTo("/box/v1/sessions");
  }

  @Test
  void blankSessionId_isRejectedWithoutARequest() {
    assertThatThrownBy(() -> client.deleteSession("  "))
        .isInstanceOf(BoxValidationException.class)
        .hasMessage("session_id must not be empty");
    assertThat(server.hasUntakenRequest()).isFalse();
  }

  @Test
  void connectionRefused_isRuntimeUnavailable() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }

    try (BoxClient nobodyHome = BoxClient.connect(URI.create("http://127.0.0.1:" + closedPort))) {
      assertThatThrownBy(nobodyHome::status)
          .isInstanceOf(BoxRuntimeUnavailableException.class)
          .hasMessageStartingWith("box runtime unavailable: java.net.ConnectException")
          .hasCauseInstanceOf(ConnectException.class);
    }
  }

  @Test
  void builder_rejectsWhatCannotWork() {
    assertThatThrownBy(() -> BoxClient.connect(URI.create("localhost:5410")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "the Box URL must be an http or https URL with a host and no query,"
                + " not 'localhost:5410'");
    assertThatThrownBy(() -> BoxClient.builder(server.uri()).requestTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the request timeout must be positive, not PT0S");
    assertThatThrownBy(() -> BoxClient.builder(server.uri()).controlToken("a\u0000b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the control token must not contain control characters");
  }

  /** Takes the next request the server saw, asserting its method and its path as sent. */
  private CannedServer.Recorded takeRequest(String method, String rawPath) throws Exception {
    CannedServer.Recorded request = server.takeRequest();
    assertThat(request.method()).isEqualTo(method);
    assertThat(request.rawPath()).isEqualTo(rawPath);
    return request;
  }
}
