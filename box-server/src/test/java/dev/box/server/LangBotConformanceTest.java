package dev.box.server;

import static java.util.Objects.requireNonNull;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.BoxSocket;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * LangBot's control channel driven at the byte level, as LangBot's Python client would: raw JSON
 * envelopes from the reference over {@code /rpc/ws}, with real sandboxes behind them.
 */
class LangBotConformanceTest {
  private static final String TOKEN = LangBotServers.TOKEN;
  private static final String INSTANCE = LangBotServers.INSTANCE;

  private static BoxServer server;

  @BeforeAll
  static void start() throws IOException {
    server = startServer(Map.of(), LangBotServers.ENV, false);
  }

  /** A bubblewrap server as {@link LangBotServers#start} starts it. */
  private static BoxServer startServer(
      Map<String, String> settings, Map<String, String> env, boolean stdio) throws IOException {
    Map<String, String> flags = new HashMap<>(settings);
    flags.put("backend", "bwrap");
    return LangBotServers.start(flags, env, stdio);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static RpcClient connect() {
    return RpcClient.connect(
        server.port(),
        Map.of("X-LangBot-Box-Control-Token", TOKEN, "X-LangBot-Instance-Id", INSTANCE));
  }

  private static JsonNode ok(JsonNode response) {
    assertThat(response.path("message").asText()).isEqualTo("success");
    assertThat(response.path("code").asInt()).isZero();
    assertThat(response.path("chunk_status").asText()).isEqualTo("end");
    return response.path("data");
  }

  private static String error(JsonNode response) {
    assertThat(response.path("code").asInt()).isEqualTo(1);
    assertThat(response.path("data").isEmpty()).isTrue();
    return response.path("message").asText();
  }

  @Test
  void ping_andHostActions_needNoContext() {
    try (RpcClient rpc = connect()) {
      assertThat(ok(rpc.call("__ping", "{}", null)).isEmpty()).isTrue();
      JsonNode health = ok(rpc.call("box_health", "{}", null));
      assertThat(health.path("available").asBoolean()).isTrue();
      assertThat(health.path("name").asText()).isNotEmpty();
      assertThat(ok(rpc.call("box_get_backend_info", "{}", null)).path("available").asBoolean())
          .isTrue();
      assertThat(
              ok(rpc.call("box_init", "{\"backend\": \"local\"}", null))
                  .path("initialized")
                  .asBoolean())
          .isTrue();
    }
  }

  @Test
  void fileChunks_areWrittenUnderTheStateDir_firstTruncatingThenAppending() throws IOException {
    String key = "0123456789abcdef-00112233445566778899aabbccddeeff.zip";
    Path file = server.config().stateDir().resolve("rpc-files").resolve(key);
    try (RpcClient rpc = connect()) {
      // the bytes 50 4b 03 04 ff 00, split across two chunks of the reference's shape
      assertThat(ok(rpc.call("__file_chunk", fileChunk(key, 6, "UEsDBA==", 0, 2), null))).isEmpty();
      assertThat(Files.readAllBytes(file)).containsExactly(0x50, 0x4b, 0x03, 0x04);
      assertThat(ok(rpc.call("__file_chunk", fileChunk(key, 6, "/wA=", 1, 2), null))).isEmpty();
      assertThat(Files.readAllBytes(file)).containsExactly(0x50, 0x4b, 0x03, 0x04, 0xff, 0x00);

      assertThat(error(rpc.call("__file_chunk", fileChunk("../escape", 1, "eA==", 0, 1), null)))
          .startsWith("BoxValidationError: invalid file_key '../escape'");
      assertThat(
              error(rpc.call("__file_chunk", fileChunk(key, 21 * 1024 * 1024, "eA==", 0, 2), null)))
          .isEqualTo(
              "BoxValidationError: file "
                  + key
                  + " is 22020096 bytes, over max_rpc_file_bytes (20971520)");
      assertThat(error(rpc.call("__file_chunk", fileChunk(key, 2, "eA==", 1, 2), null)))
          .isEqualTo(
              "BoxValidationError: chunk 1 of file " + key + " is out of order (expected 0)");
      assertThat(error(rpc.call("__file_chunk", fileChunk(key, 2, "%%%", 0, 1), null)))
          .isEqualTo("BoxValidationError: chunk 0 of file " + key + " is not valid base64");
    }
  }

  private static String fileChunk(String key, long length, String base64, int index, int amount) {
    return "{\"file_key\": \""
        + key
        + "\", \"file_length\": "
        + length
        + ", \"chunk_base64\": \""
        + base64
        + "\", \"chunk_index\": "
        + index
        + ", \"chunk_amount\": "
        + amount
        + ", \"chunk_size\": 16384}";
  }

  /** Runs {@code cmd} in {@code session} through {@code box_exec}; the answer's data. */
  private static JsonNode exec(RpcClient rpc, String session, String cmd, String ctx) {
    return ok(
        rpc.call(
            "box_exec",
            "{\"session_id\": " + BoxHttp.quote(session) + ", \"cmd\": " + BoxHttp.quote(cmd) + "}",
            ctx));
  }

  @Test
  void sessionLifecycle_seesLogicalIds() {
    String ctx = LangBotServers.context("ws-life", 1);
    try (RpcClient rpc = connect()) {
      JsonNode created =
          ok(rpc.call("box_create_session", "{\"session_id\": \"chat-1\", \"cmd\": \"\"}", ctx));
      assertThat(created.path("session_id").asText()).isEqualTo("chat-1");

      JsonNode exec = exec(rpc, "chat-1", "echo hello; echo oops >&2; exit 3", ctx);
      assertThat(exec.path("session_id").asText()).isEqualTo("chat-1");
      assertThat(exec.path("status").asText()).isEqualTo("completed");
      assertThat(exec.path("exit_code").asInt()).isEqualTo(3);
      assertThat(exec.path("stdout").asText()).isEqualTo("hello");
      assertThat(exec.path("stderr").asText()).isEqualTo("oops");

      JsonNode got = ok(rpc.call("box_get_session", "{\"session_id\": \"chat-1\"}", ctx));
      assertThat(got.path("session_id").asText()).isEqualTo("chat-1");
      assertThat(got.path("managed_processes").isObject()).isTrue();

      JsonNode all = ok(rpc.call("box_get_sessions", "{}", ctx));
      assertThat(all.path("sessions")).hasSize(1);
      assertThat(all.path("sessions").get(0).path("session_id").asText()).isEqualTo("chat-1");

      JsonNode status = ok(rpc.call("box_status", "{}", ctx));
      assertThat(status.path("active_sessions").asInt()).isEqualTo(1);
      assertThat(status.path("limits").path("max_sessions").asInt()).isEqualTo(64);

      assertThat(
              ok(rpc.call("box_delete_session", "{\"session_id\": \"chat-1\"}", ctx))
                  .path("deleted")
                  .asText())
          .isEqualTo("chat-1");
      assertThat(error(rpc.call("box_get_session", "{\"session_id\": \"chat-1\"}", ctx)))
          .isEqualTo("BoxSessionNotFoundError: session chat-1 not found");
      assertThat(error(rpc.call("box_delete_session", "{\"session_id\": \"chat-1\"}", ctx)))
          .isEqualTo("BoxSessionNotFoundError: session chat-1 not found");
    }
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "box_exec                | {\"session_id\": \"e\", \"cmd\": \"  \"}"
            + " | BoxValidationError: cmd must not be empty",
        "box_delete_session      | {}                        | KeyError: 'session_id'",
        "box_exec                | {\"session_id\": \"e\", \"cmd\": \"true\", \"timeout_sec\": 0}"
            + " | BoxValidationError: timeout_sec must be greater than 0",
        "box_get_managed_process | {\"session_id\": \"nope\"}"
            + " | BoxSessionNotFoundError: session nope not found",
        "box_get_skill           | {}                        | KeyError: 'name'",
        "box_delete_skill        | {}                        | BoxValidationError: 'name'",
      })
  void errors_carryTheReferenceClassNames(String action, String data, String message) {
    try (RpcClient rpc = connect()) {
      assertThat(error(rpc.call(action, data, LangBotServers.context("ws-errors", 1))))
          .isEqualTo(message);
    }
  }

  @Test
  void sessionAndProcessErrors_carryTheReferenceClassNamesAndLogicalIds() {
    String ctx = LangBotServers.context("ws-errors-2", 1);
    try (RpcClient rpc = connect()) {
      ok(rpc.call("box_create_session", "{\"session_id\": \"c\", \"memory_mb\": 256}", ctx));

      assertThat(
              error(
                  rpc.call(
                      "box_create_session", "{\"session_id\": \"c\", \"memory_mb\": 512}", ctx)))
          .isEqualTo("BoxSessionConflictError: Box session c already exists with memory_mb=256");
      assertThat(
              error(
                  rpc.call(
                      "box_get_managed_process",
                      "{\"session_id\": \"c\", \"process_id\": \"ghost\"}",
                      ctx)))
          .isEqualTo(
              "BoxManagedProcessNotFoundError: session c has no managed process with"
                  + " process_id=ghost");
      assertThat(
              error(
                  rpc.call(
                      "box_stop_managed_process",
                      "{\"session_id\": \"c\", \"process_id\": \"ghost\"}",
                      ctx)))
          .startsWith("BoxManagedProcessNotFoundError: ");
      ok(rpc.call("box_delete_session", "{\"session_id\": \"c\"}", ctx));
    }
  }

  @Test
  void tenantActions_failClosedWithoutATrustedContext() {
    try (RpcClient rpc = connect()) {
      assertThat(error(rpc.call("box_get_sessions", "{}", null)))
          .isEqualTo("PermissionError: Box tenant action requires a trusted Workspace context");
      String foreign =
          "{\"instance_uuid\": \"other\", \"workspace_uuid\": \"w\", \"placement_generation\": 1}";
      assertThat(error(rpc.call("box_get_sessions", "{}", foreign)))
          .isEqualTo("PermissionError: Box action context does not match the trusted instance");
    }
  }

  @Test
  void malformedJson_isIgnoredAndTheConnectionSurvives() {
    try (RpcClient rpc = connect()) {
      rpc.sendRaw("{this is not json");
      assertThat(ok(rpc.call("__ping", "{}", null)).isEmpty()).isTrue();
    }
  }

  @Test
  void wrongTokenOrInstance_isRefusedWith401BeforeTheUpgrade() {
    assertRefused(
        Map.of("X-LangBot-Box-Control-Token", "x".repeat(40), "X-LangBot-Instance-Id", INSTANCE));
    assertRefused(Map.of("X-LangBot-Instance-Id", INSTANCE));
    assertRefused(
        Map.of("X-LangBot-Box-Control-Token", TOKEN, "X-LangBot-Instance-Id", "intruder"));
    assertRefused(Map.of("X-LangBot-Box-Control-Token", TOKEN));
  }

  private static void assertRefused(Map<String, String> headers) {
    assertThatThrownBy(() -> RpcClient.connect(server.port(), headers))
        .isInstanceOf(CompletionException.class)
        .cause()
        .isInstanceOfSatisfying(
            WebSocketHandshakeException.class,
            e -> {
              assertThat(e.getResponse().statusCode()).isEqualTo(401);
              assertThat(String.valueOf(e.getResponse().body())).isEqualTo("Unauthorized");
            });
  }

  @Test
  void twoWorkspaces_withTheSameLogicalId_getSeparateSandboxes() {
    String a = LangBotServers.context("ws-a", 1);
    String b = LangBotServers.context("ws-b", 1);
    try (RpcClient rpc = connect()) {
      JsonNode inA = exec(rpc, "shared", "echo from-a > /workspace/mark; cat /workspace/mark", a);
      assertThat(inA.path("stdout").asText()).isEqualTo("from-a");
      JsonNode inB = exec(rpc, "shared", "cat /workspace/mark || echo absent", b);
      assertThat(inB.path("session_id").asText()).isEqualTo("shared");
      assertThat(inB.path("stdout").asText()).isEqualTo("absent");
      JsonNode sessionA = ok(rpc.call("box_get_session", "{\"session_id\": \"shared\"}", a));
      JsonNode sessionB = ok(rpc.call("box_get_session", "{\"session_id\": \"shared\"}", b));
      assertThat(sessionA.path("backend_session_id").asText())
          .isNotEqualTo(sessionB.path("backend_session_id").asText());
      assertThat(ok(rpc.call("box_get_sessions", "{}", a)).path("sessions")).hasSize(1);
    }
  }

  @Test
  void newerGeneration_retiresTheOlderSessions_andTheOlderIsRefused() {
    String older = LangBotServers.context("ws-gen", 1);
    String newer = LangBotServers.context("ws-gen", 2);
    try (RpcClient rpc = connect()) {
      ok(rpc.call("box_create_session", "{\"session_id\": \"g\"}", older));
      assertThat(ok(rpc.call("box_get_sessions", "{}", older)).path("sessions")).hasSize(1);

      assertThat(ok(rpc.call("box_get_sessions", "{}", newer)).path("sessions")).isEmpty();

      assertThat(error(rpc.call("box_get_sessions", "{}", older)))
          .isEqualTo("PermissionError: Stale Box placement generation");
      assertThat(
              server.sessions().list().stream()
                  .filter(s -> s.sessionId().endsWith("-g1-g"))
                  .toList())
          .isEmpty();
    }
  }

  @Test
  void relay_checksTheLangBotHeadersBeforeTheUpgrade() throws Exception {
    String ctx = LangBotServers.context("ws-relay", 1);
    String physical = physicalId("ws-relay", "mcp");
    try (RpcClient rpc = connect()) {
      JsonNode started = startCatInSessionMcp(rpc, ctx);
      assertThat(started.path("session_id").asText()).isEqualTo("mcp");
      assertThat(started.path("status").asText()).isEqualTo("running");

      Map<String, String> headers = relayHeaders("ws-relay");
      String path = "/v1/sessions/" + physical + "/managed-process/ws";
      try (BoxSocket relay = WsClient.connect(server.port(), path, headers)) {
        relay.send("{\"jsonrpc\":\"2.0\"}");
        assertThat(relay.next())
            .isInstanceOfSatisfying(
                BoxSocket.Text.class,
                t -> assertThat(t.text()).startsWith("{\"jsonrpc\":\"2.0\"}"));
      }

      assertThat(upgradeStatus(path, withHeader(headers, "X-LangBot-Placement-Generation", "01")))
          .isEqualTo(401);
      assertThat(upgradeStatus(path, withHeader(headers, "X-LangBot-Workspace-Id", "ws-other")))
          .isEqualTo(401);
      assertThat(upgradeStatus(path, withHeader(headers, "X-LangBot-Box-Control-Token", "bad")))
          .isEqualTo(401);
      assertThat(upgradeStatus("/v1/sessions/" + physical + "/managed-process/nope/ws", headers))
          .isEqualTo(400);

      assertThat(
              ok(rpc.call("box_stop_managed_process", "{\"session_id\": \"mcp\"}", ctx))
                  .path("stopped")
                  .asText())
          .isEqualTo("default");
    }
  }

  private static Map<String, String> withHeader(
      Map<String, String> headers, String name, String value) {
    Map<String, String> copy = new HashMap<>(headers);
    copy.put(name, value);
    return copy;
  }

  private static int upgradeStatus(String path, Map<String, String> headers) {
    return RpcClient.handshakeStatus(server.port(), path, headers);
  }

  @Test
  void boxsOwnControlToken_isAcceptedOnRpcWsToo_whenBothAreSet() throws IOException {
    String boxToken = "box-own-rest-token-abcdefghijklmnopqrstuvwxyz";
    try (BoxServer both =
        startServer(
            Map.of("control_token", boxToken), Map.of("LANGBOT_BOX_CONTROL_TOKEN", TOKEN), false)) {
      for (String token : new String[] {TOKEN, boxToken}) {
        try (RpcClient rpc =
            RpcClient.connect(
                both.port(),
                Map.of("X-LangBot-Box-Control-Token", token, "X-LangBot-Instance-Id", INSTANCE))) {
          assertThat(ok(rpc.call("__ping", "{}", null)).isEmpty()).isTrue();
        }
      }
    }
  }

  @Test
  void relayRefusals_haveTheReferencesShapes() throws Exception {
    String physical = physicalId("ws-refused", "none");
    try (RpcClient rpc = connect()) {
      ok(rpc.call("box_get_sessions", "{}", LangBotServers.context("ws-refused", 1)));
    }
    Map<String, String> headers = relayHeaders("ws-refused");
    String path = "/v1/sessions/" + physical + "/managed-process/ws";

    HttpResponse<?> missing = upgradeRefusal(path, headers);
    assertThat(missing.statusCode()).isEqualTo(400);
    assertThat(missing.headers().firstValue("Content-Type")).hasValue("application/json");
    JsonNode body = new com.fasterxml.jackson.databind.ObjectMapper().readTree(body(missing));
    assertThat(body.path("error").path("code").asText()).isEqualTo("BoxSessionNotFoundError");
    assertThat(body.path("error").path("message").asText())
        .isEqualTo("session " + physical + " not found");

    HttpResponse<?> unauthorized =
        upgradeRefusal(path, withHeader(headers, "X-LangBot-Box-Control-Token", "bad"));
    assertThat(unauthorized.statusCode()).isEqualTo(401);
    assertThat(unauthorized.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("text/plain"));
    assertThat(body(unauthorized)).isEqualTo("Unauthorized");
  }

  private static HttpResponse<?> upgradeRefusal(String path, Map<String, String> headers) {
    WebSocket.Builder builder = HttpClient.newHttpClient().newWebSocketBuilder();
    headers.forEach(builder::header);
    CompletionException refused =
        catchThrowableOfType(
            CompletionException.class,
            () ->
                builder
                    .buildAsync(
                        URI.create("ws://127.0.0.1:" + server.port() + path),
                        new WebSocket.Listener() {})
                    .join());
    assertThat(refused.getCause()).isInstanceOf(WebSocketHandshakeException.class);
    return ((WebSocketHandshakeException) requireNonNull(refused.getCause())).getResponse();
  }

  private static String body(HttpResponse<?> response) {
    return String.valueOf(response.body());
  }

  /** The physical id of {@code logical} in {@code workspace}, generation 1. */
  /**
   * Creates the session {@code mcp} in {@code ctx}, starts {@code cat} in it as its managed
   * process, and returns the process.
   */
  private static JsonNode startCatInSessionMcp(RpcClient rpc, String ctx) {
    ok(rpc.call("box_create_session", "{\"session_id\": \"mcp\"}", ctx));
    return ok(
        rpc.call(
            "box_start_managed_process",
            "{\"session_id\": \"mcp\", \"spec\": {\"command\": \"cat\"}}",
            ctx));
  }

  private static String physicalId(String workspace, String logical) {
    return dev.box.langbot.Tenancy.physicalId(
        new dev.box.langbot.ActionContext(INSTANCE, workspace, 1, null), logical);
  }

  /** The headers of LangBot's relay upgrade for {@code workspace}, generation 1. */
  private static Map<String, String> relayHeaders(String workspace) {
    return Map.of(
        "X-LangBot-Box-Control-Token",
        TOKEN,
        "X-LangBot-Instance-Id",
        INSTANCE,
        "X-LangBot-Workspace-Id",
        workspace,
        "X-LangBot-Placement-Generation",
        "1");
  }

  @Test
  void newerGeneration_closesTheOlderGenerationsRelays() throws Exception {
    String physical = physicalId("ws-relay-gen", "mcp");
    try (RpcClient rpc = connect()) {
      startCatInSessionMcp(rpc, LangBotServers.context("ws-relay-gen", 1));
      Map<String, String> headers = relayHeaders("ws-relay-gen");
      try (BoxSocket relay =
          WsClient.connect(
              server.port(), "/v1/sessions/" + physical + "/managed-process/ws", headers)) {
        ok(rpc.call("box_get_sessions", "{}", LangBotServers.context("ws-relay-gen", 2)));

        BoxSocket.Frame frame;
        do {
          frame = relay.next();
        } while (!(frame instanceof BoxSocket.Close));
      }
      assertThat(upgradeStatus("/v1/sessions/" + physical + "/managed-process/ws", headers))
          .isEqualTo(401);
    }
  }

  @Test
  void boxInit_appliesLimitsAtomically_andLangBotBoxConfigIsReadAtStartup() throws IOException {
    try (BoxServer configured =
        startServer(
            Map.of(),
            Map.of(
                "LANGBOT_BOX_TRUSTED_INSTANCE_UUID",
                INSTANCE,
                "LANGBOT_BOX_CONFIG",
                "{\"backend\": \"local\", \"limits\": {\"max_sessions\": 5}}"),
            false)) {
      try (RpcClient rpc = RpcClient.withTokenOf(configured, INSTANCE)) {
        String ctx = LangBotServers.context("ws-init", 1);
        assertThat(
                ok(rpc.call("box_status", "{}", ctx)).path("limits").path("max_sessions").asInt())
            .isEqualTo(5);

        assertThat(ok(rpc.call("box_init", "{\"limits\": {\"max_sessions\": 1}}", null)))
            .isEqualTo(RpcClient.JSON.createObjectNode().put("initialized", true));
        ok(rpc.call("box_create_session", "{\"session_id\": \"one\"}", ctx));
        assertThat(error(rpc.call("box_create_session", "{\"session_id\": \"two\"}", ctx)))
            .isEqualTo("BoxCapacityExceededError: Box session capacity reached (1)");

        assertThat(error(rpc.call("box_init", "{\"limits\": {\"max_sessions\": true}}", null)))
            .isEqualTo("BoxValidationError: box.limits.max_sessions must be an integer");
        assertThat(
                error(
                    rpc.call(
                        "box_init",
                        "{\"limits\": {\"max_sessions\": 9, \"max_managed_processes\": 5000}}",
                        null)))
            .isEqualTo(
                "BoxValidationError: box.limits.max_managed_processes must be between 0 and 1024");
        assertThat(
                ok(rpc.call("box_status", "{}", ctx)).path("limits").path("max_sessions").asInt())
            .isEqualTo(1);
      }
    }
  }

  @Test
  void boxInit_appliesAllowedMountRootsProfileAndImage() throws IOException {
    Path allowed = Files.createTempDirectory("box-allowed-").toRealPath();
    Path inside = Files.createDirectories(allowed.resolve("ws"));
    Path outside = Files.createTempDirectory("box-outside-").toRealPath();
    try (BoxServer configured =
        startServer(Map.of(), Map.of("LANGBOT_BOX_TRUSTED_INSTANCE_UUID", INSTANCE), false)) {
      try (RpcClient rpc = RpcClient.withTokenOf(configured, INSTANCE)) {
        String ctx = LangBotServers.context("ws-local", 1);
        assertThat(error(rpc.call("box_init", "{\"local\": {\"profile\": \"paranoid\"}}", null)))
            .isEqualTo(
                "BoxValidationError: unknown box profile 'paranoid', available profiles: default,"
                    + " network_basic, network_extended, offline_readonly");
        ok(
            rpc.call(
                "box_init",
                "{\"local\": {\"host_root\": \""
                    + allowed
                    + "\", \"allowed_mount_roots\": [\""
                    + allowed
                    + "\"], \"profile\": \"offline_readonly\", \"image\": \"custom:1\"}}",
                null));
        assertThat(allowed.resolve("default")).isDirectory();

        assertThat(
                error(
                    rpc.call(
                        "box_create_session",
                        "{\"session_id\": \"out\", \"host_path\": \"" + outside + "\"}",
                        ctx)))
            .isEqualTo("BoxValidationError: host_path is outside allowed_mount_roots: " + allowed);
        JsonNode created =
            ok(
                rpc.call(
                    "box_create_session",
                    "{\"session_id\": \"in\", \"host_path\": \"" + inside + "\"}",
                    ctx));
        assertThat(created.path("host_path").asText()).isEqualTo(inside.toString());
        assertThat(created.path("host_path_mode").asText()).isEqualTo("ro");
        assertThat(created.path("image").asText()).isEqualTo("custom:1");

        JsonNode exec =
            ok(
                rpc.call(
                    "box_exec",
                    "{\"session_id\": \"net\", \"cmd\": \"echo hi\", \"network\": \"on\"}",
                    ctx));
        assertThat(exec.path("stdout").asText()).isEqualTo("hi");
        JsonNode session = ok(rpc.call("box_get_session", "{\"session_id\": \"net\"}", ctx));
        assertThat(session.path("network").asText()).isEqualTo("off");
        assertThat(session.path("read_only_rootfs").asBoolean()).isTrue();
      }
    }
  }

  @Test
  void invalidLangBotBoxConfig_isIgnored() throws IOException {
    try (BoxServer started =
        startServer(Map.of(), Map.of("LANGBOT_BOX_CONFIG", "{not json"), false)) {
      assertThat(started.port()).isPositive();
    }
  }

  @Test
  void stdioModeWithoutATrustedInstance_isRefused() throws IOException {
    assertThatThrownBy(() -> startServer(Map.of(), Map.of(), true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("LANGBOT_BOX_TRUSTED_INSTANCE_UUID is required for stdio Box control");
  }

  @Test
  void healthz_reportsResources() throws Exception {
    var response =
        HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/healthz"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    JsonNode body = RpcClient.JSON.readTree(response.body());
    assertThat(body.path("live").asBoolean()).isTrue();
    assertThat(body.path("resources").has("sessions")).isTrue();
  }
}
