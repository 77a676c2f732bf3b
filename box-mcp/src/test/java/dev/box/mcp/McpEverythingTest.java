package dev.box.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxManagedProcessStatus;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.client.BoxClient;
import dev.box.client.LiveBox;
import dev.box.client.TcpProxy;
import dev.box.testclient.McpFixture;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Content;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The official MCP Java SDK client talking to an MCP server no one here wrote, the reference server
 * "everything" from npm, run by node as a managed process in a bubblewrap sandbox without network,
 * through a real Box server. A {@link TcpProxy} between the client and the server breaks the
 * connection the way a network does.
 */
class McpEverythingTest {
  private static final String SESSION = "mcp";
  private static final String PROCESS = "everything";

  private static Path entry;
  @RegisterExtension static final LiveBox box = LiveBox.perClass();

  @BeforeAll
  static void start() {
    entry = McpFixture.entryPoint();
  }

  @Test
  void sdkClient_initializesListsAndCallsTools_andSurvivesADroppedConnection() throws Exception {
    BoxClient direct = box.client();
    String cache = McpFixture.CACHE.toString();
    direct.createSession(
        BoxSpec.builder(SESSION)
            .network(BoxNetworkMode.OFF)
            .extraMounts(List.of(new BoxMountSpec(cache, cache, BoxHostMountMode.RO)))
            .build());
    BoxManagedProcessInfo started =
        direct.startProcess(
            SESSION,
            BoxManagedProcessSpec.of("node", entry.toString(), "stdio").withProcessId(PROCESS));
    List<ProgressNotification> progress = new CopyOnWriteArrayList<>();

    try (TcpProxy proxy = TcpProxy.to(box.port());
        BoxClient viaProxy = box.builder(proxy.uri()).build()) {
      McpSyncClient mcp =
          McpClient.sync(
                  BoxMcpClientTransport.builder(viaProxy, SESSION).processId(PROCESS).build())
              .requestTimeout(Duration.ofSeconds(30))
              .progressConsumer(progress::add)
              .build();

      assertThat(mcp.initialize().serverInfo().name()).contains("everything");
      assertThat(mcp.listTools().tools())
          .extracting(Tool::name)
          .contains("echo", "trigger-long-running-operation");
      assertThat(text(mcp.callTool(echo("hello from Box")))).isEqualTo("Echo: hello from Box");

      // A call whose progress and answer are written while the connection is down. It blocks, so
      // it runs on a thread of its own: the JDK opens WebSockets on the common ForkJoinPool, which
      // a
      // blocked common-pool thread would starve on a small machine.
      CompletableFuture<CallToolResult> slow = new CompletableFuture<>();
      Thread.ofVirtual()
          .start(
              () -> {
                try {
                  slow.complete(
                      mcp.callTool(
                          new CallToolRequest(
                              "trigger-long-running-operation",
                              Map.of("duration", 4, "steps", 4),
                              Map.of("progressToken", "box-slow"))));
                } catch (RuntimeException e) {
                  slow.completeExceptionally(e);
                }
              });
      await().atMost(Duration.ofSeconds(20)).until(() -> !progress.isEmpty());
      proxy.dropConnections();

      assertThat(text(slow.get(30, TimeUnit.SECONDS)))
          .isEqualTo("Long running operation completed. Duration: 4 seconds, Steps: 4.");
      // The SDK hands notifications to their consumer apart from responses: the last one may
      // still be on its way when the answer is.
      await().atMost(Duration.ofSeconds(10)).until(() -> progress.size() >= 4);
      assertThat(progress)
          .as("every progress notification exactly once")
          .extracting(ProgressNotification::progress)
          .containsExactly(1.0, 2.0, 3.0, 4.0);
      assertThat(text(mcp.callTool(echo("after the drop")))).isEqualTo("Echo: after the drop");
      assertThat(proxy.connectionsAccepted()).as("one reconnect").isEqualTo(2);

      BoxManagedProcessInfo now = direct.process(SESSION, PROCESS);
      assertThat(now.startedAt()).as("the same process").isEqualTo(started.startedAt());
      assertThat(now.status()).isEqualTo(BoxManagedProcessStatus.RUNNING);

      assertThat(mcp.closeGracefully()).isTrue();
    }
    assertThat(direct.process(SESSION, PROCESS).status())
        .as("the process outlives the client")
        .isEqualTo(BoxManagedProcessStatus.RUNNING);
  }

  private static CallToolRequest echo(String message) {
    return new CallToolRequest("echo", Map.of("message", message));
  }

  private static String text(CallToolResult result) {
    assertThat(result.isError()).as("isError").isNotEqualTo(true);
    Content first = result.content().getFirst();
    assertThat(first).isInstanceOf(TextContent.class);
    return ((TextContent) first).text();
  }
}
