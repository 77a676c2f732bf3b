package dev.box.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.langbot.ActionContext;
import dev.box.langbot.Tenancy;
import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import dev.box.testclient.McpFixture;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LangBot's MCP stdio-in-box at the byte level: a Box server started with LangBot's environment,
 * driven over the control channel {@code /rpc/ws} with raw action envelopes, and the reference MCP
 * server "everything" reached through the managed-process relay under the LangBot headers, as
 * LangBot's MCP WebSocket client does: its connection handshake, the action envelopes, the relay
 * route with its headers, the launch of a stdio MCP server in a sandbox, and physical session ids
 * under the placement-generation fence.
 */
class LangBotRelayMcpTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String TOKEN = "langbot-test-control-token-0123456789abcdef";
  private static final String INSTANCE = UUID.randomUUID().toString();
  private static final String WORKSPACE = UUID.randomUUID().toString();
  private static final String SESSION = "mcp-everything";
  private static final String PROCESS = "everything";

  @AutoClose private static final HttpClient http = HttpClient.newHttpClient();
  @TempDir static Path dataDir;
  private static Path entry;
  private static BoxServer server;

  @BeforeAll
  static void start() throws IOException {
    entry = McpFixture.entryPoint();
    server =
        BoxServer.start(
            ServerConfig.resolve(
                Map.of("port", "0", "data_dir", dataDir.toString(), "backend", "bwrap"), Map.of()),
            Clock.systemUTC(),
            Map.of(
                "LANGBOT_BOX_CONTROL_TOKEN", TOKEN, "LANGBOT_BOX_TRUSTED_INSTANCE_UUID", INSTANCE),
            false);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void langBotMcpClient_handshakesListsAndCallsToolsThroughTheRelay() throws Exception {
    Messages control = new Messages();
    WebSocket rpc =
        http.newWebSocketBuilder()
            .header("X-LangBot-Box-Control-Token", TOKEN)
            .header("X-LangBot-Instance-Id", INSTANCE)
            .buildAsync(URI.create("ws://127.0.0.1:" + server.port() + "/rpc/ws"), control)
            .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    String cache = McpFixture.CACHE.toString();

    JsonNode session =
        action(
            rpc,
            control,
            1,
            "box_create_session",
            Map.of(
                "session_id",
                SESSION,
                "workdir",
                "/workspace",
                "network",
                "off",
                "persistent",
                true,
                "extra_mounts",
                List.of(Map.of("host_path", cache, "mount_path", cache, "mode", "ro"))));
    assertThat(session.path("session_id").asText()).as("the logical id").isEqualTo(SESSION);
    JsonNode process =
        action(
            rpc,
            control,
            2,
            "box_start_managed_process",
            Map.of(
                "session_id",
                SESSION,
                "spec",
                Map.of(
                    "process_id",
                    PROCESS,
                    "command",
                    "node",
                    "args",
                    List.of(entry.toString(), "stdio"))));
    assertThat(process.path("status").asText()).isEqualTo("running");
    assertThat(process.path("session_id").asText()).isEqualTo(SESSION);

    String physical = Tenancy.physicalId(new ActionContext(INSTANCE, WORKSPACE, 1, null), SESSION);
    URI relay =
        URI.create(
            "ws://127.0.0.1:"
                + server.port()
                + "/v1/sessions/"
                + physical
                + "/managed-process/"
                + PROCESS
                + "/ws");

    Throwable refused =
        catchThrowable(
            () ->
                http.newWebSocketBuilder()
                    .subprotocols("mcp")
                    .header("X-LangBot-Box-Control-Token", TOKEN)
                    .header("X-LangBot-Instance-Id", INSTANCE)
                    .header("X-LangBot-Placement-Generation", "1")
                    .buildAsync(relay, new Messages())
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS));
    assertThat(refused)
        .as("no X-LangBot-Workspace-Id")
        .cause()
        .isInstanceOfSatisfying(
            WebSocketHandshakeException.class,
            e -> assertThat(e.getResponse().statusCode()).isEqualTo(401));

    Messages mcp = new Messages();
    WebSocket ws =
        http.newWebSocketBuilder()
            .subprotocols("mcp")
            .header("X-LangBot-Box-Control-Token", TOKEN)
            .header("X-LangBot-Instance-Id", INSTANCE)
            .header("X-LangBot-Workspace-Id", WORKSPACE)
            .header("X-LangBot-Placement-Generation", "1")
            .buildAsync(relay, mcp)
            .get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(ws.getSubprotocol()).isEqualTo("mcp");

    JsonNode init =
        request(
            ws,
            mcp,
            1,
            "initialize",
            Map.of(
                "protocolVersion",
                "2025-06-18",
                "capabilities",
                Map.of(),
                "clientInfo",
                Map.of("name", "langbot", "version", "test")));
    assertThat(init.path("result").path("serverInfo").path("name").asText()).contains("everything");
    assertThat(init.path("result").path("protocolVersion").asText()).isNotEmpty();
    send(ws, Map.of("jsonrpc", "2.0", "method", "notifications/initialized"));

    JsonNode tools = request(ws, mcp, 2, "tools/list", Map.of());
    assertThat(tools.path("result").path("tools").findValuesAsText("name")).contains("echo");

    JsonNode echo =
        request(
            ws,
            mcp,
            3,
            "tools/call",
            Map.of("name", "echo", "arguments", Map.of("message", "hello from LangBot")));
    assertThat(echo.path("result").path("isError").asBoolean(false)).isFalse();
    assertThat(echo.path("result").path("content").path(0).path("text").asText())
        .isEqualTo("Echo: hello from LangBot");

    ws.sendClose(WebSocket.NORMAL_CLOSURE, "").get(WAIT.toSeconds(), TimeUnit.SECONDS);
    JsonNode deleted = action(rpc, control, 3, "box_delete_session", Map.of("session_id", SESSION));
    assertThat(deleted.path("deleted").asText()).isEqualTo(SESSION);
    rpc.sendClose(WebSocket.NORMAL_CLOSURE, "").get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  /** Sends one action envelope of this Workspace and returns the data of its successful answer. */
  private static JsonNode action(
      WebSocket rpc, Messages control, int seq, String action, Map<String, ?> data)
      throws Exception {
    send(
        rpc,
        Map.of(
            "seq_id",
            seq,
            "action",
            action,
            "data",
            data,
            "context",
            Map.of(
                "instance_uuid",
                INSTANCE,
                "workspace_uuid",
                WORKSPACE,
                "placement_generation",
                1)));
    JsonNode answer = control.until(m -> m.has("code") && m.path("seq_id").asInt() == seq);
    assertThat(answer.path("code").asInt()).as(action + ": " + answer).isZero();
    return answer.path("data");
  }

  /** Sends one JSON-RPC request and returns its response, skipping notifications in between. */
  private static JsonNode request(
      WebSocket ws, Messages mcp, int id, String method, Map<String, ?> params) throws Exception {
    send(ws, Map.of("jsonrpc", "2.0", "id", id, "method", method, "params", params));
    JsonNode response = mcp.until(m -> m.has("id") && m.path("id").asInt() == id);
    assertThat(response.has("error")).as(method + ": " + response).isFalse();
    return response;
  }

  private static void send(WebSocket ws, Object message) throws Exception {
    ws.sendText(JSON.writeValueAsString(message), true).get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  /** Every WebSocket message received, each parsed as one complete JSON object. */
  private static final class Messages implements WebSocket.Listener {
    private final BlockingQueue<Object> received = new LinkedBlockingQueue<>();
    private final StringBuilder partial = new StringBuilder();

    @Override
    public @Nullable CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      partial.append(data);
      if (last) {
        String text = partial.toString();
        partial.setLength(0);
        try {
          JsonNode node = JSON.readTree(text);
          received.add(
              node instanceof ObjectNode ? node : new AssertionError("not an object: " + text));
        } catch (IOException e) {
          received.add(new AssertionError("not one JSON object: " + text, e));
        }
      }
      ws.request(1);
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
      received.add(new AssertionError("a binary frame"));
      ws.request(1);
      return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
      received.add(new AssertionError("WebSocket failed", error));
    }

    /** The first message that {@code wanted} accepts; fails on a bad frame or after the wait. */
    JsonNode until(Predicate<JsonNode> wanted) throws InterruptedException {
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (true) {
        Object next = received.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (next == null) {
          throw new AssertionError("no wanted message within " + WAIT);
        }
        if (next instanceof AssertionError failure) {
          throw failure;
        }
        JsonNode message = (JsonNode) next;
        if (wanted.test(message)) {
          return message;
        }
      }
    }
  }
}
