package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxDataDir;
import dev.box.api.BoxSpec;
import dev.box.api.internal.FileTrees;
import dev.box.client.BoxClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What an MCP client sees of Box's MCP server, whatever the transport: the SDK's own client against
 * a real {@code box serve} child process with real bubblewrap sandboxes. A subclass says how the
 * client reaches it ({@code box mcp} over stdio, or {@code /mcp} over streamable HTTP).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class McpToolsContract {
  private Path dataDir = Path.of("");

  private ServeProcessTest.@Nullable Server server;
  private @Nullable McpSyncClient client;

  /** The progress notifications the client heard. */
  private final List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();

  /**
   * The transport of a client of the server at {@code uri} with the control token {@code token}.
   */
  abstract McpClientTransport transport(URI uri, String token);

  @BeforeAll
  void startServerAndConnect() throws Exception {
    dataDir = Files.createTempDirectory("box-mcp-test-");
    ServeProcessTest.Server started = ServeProcessTest.Server.serve(dataDir, Map.of());
    server = started;
    client =
        McpClient.sync(transport(started.uri(), token()))
            .requestTimeout(Duration.ofSeconds(60))
            .initializationTimeout(Duration.ofSeconds(60))
            .progressConsumer(progress::add)
            .build();
    client.initialize();
  }

  @AfterAll
  void stop() throws InterruptedException {
    if (client != null) {
      client.closeGracefully();
    }
    if (server != null) {
      server.process().destroy();
      server.process().waitFor();
    }
    FileTrees.deleteTreeQuietly(dataDir);
  }

  /** The token {@code box serve} generated in its data dir. */
  final String token() throws java.io.IOException {
    return Files.readString(BoxDataDir.tokenFile(dataDir)).strip();
  }

  final ServeProcessTest.Server server() {
    return Objects.requireNonNull(server);
  }

  @Test
  void listTools_namesEverySandboxTool() {
    List<String> names =
        mcp().listTools().tools().stream().map(McpSchema.Tool::name).sorted().toList();

    assertThat(names)
        .containsExactly(
            "delete_session",
            "exec",
            "list_files",
            "preview_link",
            "process_output",
            "read_file",
            "start_process",
            "stop_process",
            "write_file");
  }

  @Test
  void exec_createsTheSession_andReportsExitCodeStdoutAndStderr() {
    Map<String, Object> answer =
        ok(
            "exec",
            "session_id",
            "exec-basic",
            "cmd",
            "echo out; echo \"$GREETING\" >&2; pwd; exit 3",
            "env",
            Map.of("GREETING", "hello"),
            "workdir",
            "/workspace/sub");

    assertThat(answer)
        .containsEntry("status", "completed")
        .containsEntry("exit_code", 3)
        .containsEntry("stdout", "out\n/workspace/sub\n")
        .containsEntry("stderr", "hello\n")
        .containsEntry("stdout_truncated", false)
        .containsEntry("stderr_truncated", false);
  }

  @Test
  void exec_withAProgressToken_tellsTheOutputAsProgress_asItComes() {
    CallToolResult result =
        mcp()
            .callTool(
                McpSchema.CallToolRequest.builder("exec")
                    .arguments(Map.of("session_id", "progress", "cmd", "echo one; echo two >&2"))
                    .progressToken("exec-1")
                    .build());

    assertThat(result.isError()).as("%s", result.content()).isFalse();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                progress.stream()
                    .filter(p -> p.progressToken().equals("exec-1"))
                    .map(McpSchema.ProgressNotification::message)
                    .toList(),
            told ->
                String.join("", told).contains("one\n") && String.join("", told).contains("two\n"));
    List<Double> counts =
        progress.stream()
            .filter(p -> p.progressToken().equals("exec-1"))
            .map(McpSchema.ProgressNotification::progress)
            .toList();
    // Sent in order, each count larger; a client may hand them to its consumer in another order.
    assertThat(counts).doesNotHaveDuplicates().allMatch(count -> count > 0);
  }

  @Test
  void exec_cutsLongOutputForAModel_headAndTail() {
    Map<String, Object> answer =
        ok(
            "exec",
            "session_id",
            "exec-long",
            "cmd",
            "printf start; head -c 100000 /dev/zero | tr '\\0' x; printf end");

    String stdout = (String) Objects.requireNonNull(answer.get("stdout"));
    assertThat(stdout).hasSizeLessThanOrEqualTo(4000).startsWith("startxxx").endsWith("xxxend");
    assertThat(stdout).contains("characters truncated");
    assertThat(answer).containsEntry("stdout_truncated", true).containsEntry("exit_code", 0);
  }

  @Test
  void exec_thatOutlivesItsTimeout_isKilledAndReportedAsTimedOut() {
    Map<String, Object> answer =
        ok("exec", "session_id", "exec-timeout", "cmd", "echo started; sleep 60", "timeout_sec", 1);

    assertThat(answer)
        .containsEntry("status", "timed_out")
        .containsEntry("exit_code", null)
        .containsEntry("stdout", "started\n")
        .containsEntry("timeout_sec", 1);
  }

  @Test
  void exec_withATimeoutBeyondTheLimit_isClampedToIt() {
    Map<String, Object> answer =
        ok("exec", "session_id", "exec-clamp", "cmd", "true", "timeout_sec", 100000);

    assertThat(answer).containsEntry("timeout_sec", 120).containsEntry("exit_code", 0);
  }

  @Test
  void exec_inASessionAnotherClientCreated_runsInItAsItIs() throws Exception {
    try (BoxClient box = server().client(dataDir)) {
      box.createSession(BoxSpec.builder("made-elsewhere").memoryMb(256).cpus(0.5).build());
    }

    Map<String, Object> answer = ok("exec", "session_id", "made-elsewhere", "cmd", "echo hi");

    assertThat(answer).containsEntry("stdout", "hi\n").containsEntry("exit_code", 0);
  }

  @Test
  void writeReadAndList_roundTripAFile() {
    Map<String, Object> written =
        ok(
            "write_file",
            "session_id",
            "files",
            "path",
            "notes/hello.txt",
            "content",
            "héllo\nwörld\n");
    Map<String, Object> read = ok("read_file", "session_id", "files", "path", "notes/hello.txt");
    Map<String, Object> listed = ok("list_files", "session_id", "files", "path", "notes");

    assertThat(written).containsEntry("bytes_written", 14);
    assertThat(read)
        .containsEntry("content", "héllo\nwörld\n")
        .containsEntry("content_truncated", false);
    assertThat(listed).containsEntry("entries_truncated", false);
    assertThat(listed.get("entries"))
        .isEqualTo(List.of(Map.of("name", "hello.txt", "type", "file", "size", 14)));
  }

  @Test
  void readFile_ofALongFile_isCutAndFlagged() {
    ok("exec", "session_id", "files-long", "cmd", "head -c 50000 /dev/zero | tr '\\0' y > big.txt");

    Map<String, Object> read = ok("read_file", "session_id", "files-long", "path", "big.txt");

    assertThat((String) Objects.requireNonNull(read.get("content"))).hasSizeLessThanOrEqualTo(4000);
    assertThat(read).containsEntry("content_truncated", true);
  }

  @Test
  void process_startReadAndStop() {
    Map<String, Object> started =
        ok(
            "start_process",
            "session_id",
            "proc",
            "cmd",
            "echo ready; echo oops >&2; exec sleep 1000");
    String id = (String) Objects.requireNonNull(started.get("process_id"));
    StringBuilder seen = new StringBuilder();

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              Map<String, Object> output = processOutput("proc", id);
              assertThat(output).containsEntry("running", true);
              seen.append(output.get("output"));
              assertThat(seen.toString()).contains("ready\n").contains("oops\n");
            });
    Map<String, Object> stopped = ok("stop_process", "session_id", "proc", "process_id", id);

    assertThat(stopped).containsEntry("stopped", id);
    assertThat(error("process_output", "session_id", "proc", "process_id", id))
        .contains("not_found");
  }

  @Test
  void process_thatExits_reportsItsOutputOnceAndItsExitCode() {
    startProcess("proc-exit", "counter", "for i in 1 2 3; do echo line$i; done; exit 7");
    StringBuilder seen = new StringBuilder();
    AtomicReference<Map<String, Object>> last = new AtomicReference<>(Map.of());

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              Map<String, Object> output = processOutput("proc-exit", "counter");
              seen.append(output.get("output"));
              last.set(output);
              return Boolean.FALSE.equals(output.get("running"));
            });

    assertThat(seen.toString()).isEqualTo("line1\nline2\nline3\n");
    assertThat(last.get()).containsEntry("exit_code", 7);
  }

  @Test
  void process_thatFloodsItsOutput_isCutForAModel_andEveryCharacterIsShownOrCounted() {
    startProcess("proc-flood", "flood", "head -c 1000000 /dev/zero | tr '\\0' z; echo END");
    Pattern notice =
        Pattern.compile("\n\n\\.\\.\\. \\[(\\d+) characters truncated\\] \\.\\.\\.\n\n");
    long[] accounted = {0};
    StringBuilder last = new StringBuilder();

    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              Map<String, Object> output = processOutput("proc-flood", "flood");
              String text = (String) Objects.requireNonNull(output.get("output"));
              assertThat(text).hasSizeLessThanOrEqualTo(4000);
              Matcher cut = notice.matcher(text);
              if (cut.find()) {
                assertThat(output).containsEntry("output_truncated", true);
                accounted[0] += text.length() - cut.group().length() + Long.parseLong(cut.group(1));
              } else {
                accounted[0] += text.length();
              }
              if (!text.isEmpty()) {
                last.setLength(0);
                last.append(text);
              }
              return Boolean.FALSE.equals(output.get("running"));
            });

    assertThat(accounted[0]).isEqualTo(1_000_004);
    assertThat(last.toString()).endsWith("zzzEND\n");
  }

  @Test
  void previewLink_opensAServerInTheSandbox_withoutTheToken() throws Exception {
    ok(
        "start_process",
        "session_id",
        "web",
        "cmd",
        "mkdir -p site && echo served-from-the-sandbox > site/index.html"
            + " && exec python3 -m http.server 8765 --bind 127.0.0.1 --directory site");
    Map<String, Object> link = ok("preview_link", "session_id", "web", "port", 8765);
    String url = String.valueOf(link.get("url"));
    assertThat(url).contains("/preview/").endsWith("/");
    assertThat(link).containsKey("expires_at");
    HttpClient http = HttpClient.newHttpClient();
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(
            () ->
                http.send(
                        HttpRequest.newBuilder(URI.create(url)).build(),
                        HttpResponse.BodyHandlers.ofString())
                    .body(),
            body -> body.equals("served-from-the-sandbox\n"));
    assertThat(error("preview_link", "session_id", "web", "port", 70000)).contains("port");
  }

  @Test
  void deleteSession_deletesIt() {
    ok("write_file", "session_id", "doomed", "path", "a.txt", "content", "a");

    assertThat(ok("delete_session", "session_id", "doomed")).containsEntry("deleted", "doomed");
    assertThat(error("read_file", "session_id", "doomed", "path", "a.txt"))
        .contains("session_not_found");
  }

  @Test
  void badArguments_areErrorResults_thatNameTheProblem() {
    assertThat(error("exec", "session_id", "bad")).contains("'cmd'");
    assertThat(error("exec", "session_id", "bad", "cmd", "true", "timeout_sec", "soon"))
        .contains("'timeout_sec' must be an integer");
    assertThat(error("exec", "session_id", "bad", "cmd", "true", "workdir", "relative"))
        .contains("workdir");
    assertThat(error("read_file", "session_id", "no-such-session", "path", "x.txt"))
        .contains("session_not_found");
    assertThat(error("delete_session")).contains("'session_id'");
    assertThat(error("process_output", "session_id", "bad")).contains("'process_id'");
  }

  /** Calls a tool that must succeed and returns its structured answer. */
  private Map<String, Object> startProcess(String session, String processId, String cmd) {
    return ok("start_process", "session_id", session, "process_id", processId, "cmd", cmd);
  }

  private Map<String, Object> processOutput(String session, String processId) {
    return ok("process_output", "session_id", session, "process_id", processId);
  }

  final Map<String, Object> ok(String tool, Object... arguments) {
    CallToolResult result = call(tool, arguments);
    assertThat(result.isError()).as("%s: %s", tool, result.content()).isFalse();
    @SuppressWarnings("unchecked")
    Map<String, Object> answer = (Map<String, Object>) result.structuredContent();
    return Objects.requireNonNull(answer);
  }

  /** Calls a tool that must fail and returns its message. */
  final String error(String tool, Object... arguments) {
    CallToolResult result = call(tool, arguments);
    assertThat(result.isError()).as("%s: %s", tool, result.content()).isTrue();
    return ((McpSchema.TextContent) result.content().getFirst()).text();
  }

  private CallToolResult call(String tool, Object... arguments) {
    Map<String, Object> args = new HashMap<>();
    for (int i = 0; i < arguments.length; i += 2) {
      args.put((String) arguments[i], arguments[i + 1]);
    }
    return mcp().callTool(new McpSchema.CallToolRequest(tool, args));
  }

  private McpSyncClient mcp() {
    return Objects.requireNonNull(client);
  }
}
