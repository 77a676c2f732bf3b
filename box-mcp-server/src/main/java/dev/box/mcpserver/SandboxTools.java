package dev.box.mcpserver;

import dev.box.agenthost.AgentFiles;
import dev.box.agenthost.OutputCut;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxFileEntry;
import dev.box.api.BoxFileList;
import dev.box.api.BoxFileWritten;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxPreviewLink;
import dev.box.api.BoxProfile;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSpec;
import dev.box.client.BoxClient;
import dev.box.client.ExecOutput;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.io.ByteArrayInputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox as MCP tools over a {@link BoxClient}: what each tool does, and how its result is
 * bounded and reported.
 *
 * <p>Everything a sandbox writes is treated as hostile and unbounded: outputs and file contents are
 * cut with {@link OutputCut} (4,000 characters, 60 % head and 40 % tail) and say so in a {@code
 * *_truncated} flag, a file is read up to {@link AgentFiles#MAX_READ_BYTES} only, and a listing
 * shows at most {@link #MAX_ENTRIES} entries. A failure of any kind (a bad argument, an error the
 * server reported, a server that cannot be reached) is a tool result with {@code isError} and a
 * message for the model, never a protocol error or a stack trace.
 *
 * <p>Sessions: {@code exec}, {@code write_file} and {@code start_process} create the session they
 * name when it does not exist (with the default spec), since a model's first step in a fresh
 * sandbox is one of these; {@code read_file}, {@code list_files} and the process tools require it,
 * so that a mistyped id is an error rather than an empty new sandbox. A session another client
 * created with settings of its own is used as it is.
 */
final class SandboxTools {
  private static final Logger log = LoggerFactory.getLogger(SandboxTools.class);

  /** The session a tool uses when the call names none. */
  static final String DEFAULT_SESSION = "default";

  /** The most entries {@code list_files} returns. */
  static final int MAX_ENTRIES = 200;

  /** A preview link's lifetime when the call names none, and the longest the server gives. */
  static final int LINK_TTL = 3600;

  static final int MAX_LINK_TTL = 7 * 24 * 3600;

  private static final BoxProfile PROFILE = BoxProfile.named("default");

  private final Supplier<BoxClient> client;
  private final ProcessOutputs outputs;

  /**
   * @param client the client of the server that runs the sandboxes; asked for at each call, so that
   *     an endpoint can be served before its server is reachable
   * @param outputs the output of the processes the tools follow
   */
  SandboxTools(Supplier<BoxClient> client, ProcessOutputs outputs) {
    this.client = client;
    this.outputs = outputs;
  }

  /** Every tool, with its handler. */
  List<SyncToolSpecification> specifications() {
    return List.of(
        progressing(ToolSchemas.exec(PROFILE.timeoutSec(), PROFILE.maxTimeoutSec()), this::exec),
        spec(ToolSchemas.readFile(), this::readFile),
        spec(ToolSchemas.writeFile(), this::writeFile),
        spec(ToolSchemas.listFiles(MAX_ENTRIES), this::listFiles),
        spec(ToolSchemas.startProcess(), this::startProcess),
        spec(ToolSchemas.processOutput(), this::processOutput),
        spec(ToolSchemas.stopProcess(), this::stopProcess),
        spec(ToolSchemas.previewLink(LINK_TTL, MAX_LINK_TTL), this::previewLink),
        spec(ToolSchemas.deleteSession(), this::deleteSession));
  }

  /**
   * Runs {@code cmd}; with {@code progress} (the client asked for progress), streamed, each piece
   * of its output told as a progress notification as the command writes it.
   */
  private Map<String, Object> exec(ToolArguments args, @Nullable ExecOutput progress) {
    String cmd = args.requiredString("cmd");
    String session = session(args);
    int timeout = args.integer("timeout_sec", PROFILE.timeoutSec());
    if (timeout < 1) {
      throw new ToolArguments.BadArgument("argument 'timeout_sec' must be at least 1");
    }
    timeout = Math.min(timeout, PROFILE.maxTimeoutSec());
    BoxSpec spec =
        BoxSpec.builder(session)
            .cmd(cmd)
            .timeoutSec(timeout)
            .env(args.stringMap("env"))
            .workdir(args.string("workdir", BoxSpec.DEFAULT_MOUNT_PATH))
            .build();
    BoxClient box = client.get();
    BoxExecutionResult result;
    try {
      result = progress == null ? box.exec(spec) : box.exec(spec, progress);
    } catch (BoxSessionConflictException e) {
      // The session exists with settings of its own (another client made it): run in it as it is.
      BoxSpec theirs = withSettingsOf(box.session(session), spec);
      result = progress == null ? box.exec(theirs) : box.exec(theirs, progress);
    }
    OutputCut stdout = OutputCut.of(result.stdout());
    OutputCut stderr = OutputCut.of(result.stderr());
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("session_id", result.sessionId());
    answer.put("status", result.status().wireName());
    answer.put("exit_code", result.exitCode());
    answer.put("stdout", stdout.text());
    answer.put("stdout_truncated", stdout.truncated() || result.stdoutTruncatedBytes() > 0);
    answer.put("stderr", stderr.text());
    answer.put("stderr_truncated", stderr.truncated() || result.stderrTruncatedBytes() > 0);
    answer.put("duration_ms", result.durationMs());
    answer.put("timeout_sec", timeout);
    return answer;
  }

  /** {@code spec} with the session settings of {@code session}, which the server compares. */
  private static BoxSpec withSettingsOf(BoxSessionInfo session, BoxSpec spec) {
    return spec.toBuilder()
        .image(session.image())
        .network(session.network())
        .hostPath(session.hostPath())
        .hostPathMode(session.hostPathMode())
        .mountPath(session.mountPath())
        .persistent(session.persistent())
        .cpus(session.cpus())
        .memoryMb(session.memoryMb())
        .pidsLimit(session.pidsLimit())
        .readOnlyRootfs(session.readOnlyRootfs())
        .workspaceQuotaMb(session.workspaceQuotaMb())
        .build();
  }

  private Map<String, Object> readFile(ToolArguments args) {
    String path = args.requiredString("path");
    OutputCut content =
        AgentFiles.readText(client.get().files(), session(args), path, OutputCut.DEFAULT_LIMIT);
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("path", path);
    answer.put("content", content.text());
    answer.put("content_truncated", content.truncated());
    return answer;
  }

  private Map<String, Object> writeFile(ToolArguments args) {
    String path = args.requiredString("path");
    String content = args.string("content");
    if (content == null) {
      throw new ToolArguments.BadArgument("missing required argument 'content' (a string)");
    }
    String session = session(args);
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    BoxFileWritten written =
        inSession(
            session,
            () -> client.get().files().write(session, path, new ByteArrayInputStream(bytes)));
    return Map.of("path", written.path(), "bytes_written", written.size());
  }

  private Map<String, Object> listFiles(ToolArguments args) {
    String path = args.string("path", BoxSpec.DEFAULT_MOUNT_PATH);
    BoxFileList list = client.get().files().list(session(args), path);
    List<Map<String, Object>> entries =
        list.entries().stream().limit(MAX_ENTRIES).map(SandboxTools::entry).toList();
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("path", path);
    answer.put("entries", entries);
    answer.put("entries_truncated", list.truncated() || list.entries().size() > MAX_ENTRIES);
    return answer;
  }

  private static Map<String, Object> entry(BoxFileEntry entry) {
    return Map.of("name", entry.name(), "type", entry.type().wireName(), "size", entry.size());
  }

  private Map<String, Object> startProcess(ToolArguments args) {
    String cmd = args.requiredString("cmd");
    String session = session(args);
    String processId =
        args.string(
            "process_id", "p-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()));
    // stderr joins stdout, which is the stream the relay serves from its start: a model reads one
    // log, as it would in a terminal.
    BoxManagedProcessSpec spec =
        new BoxManagedProcessSpec(
            processId,
            "/bin/sh",
            List.of("-c", "exec 2>&1\n" + cmd),
            args.stringMap("env"),
            args.string("workdir", BoxSpec.DEFAULT_MOUNT_PATH),
            0);
    BoxClient box = client.get();
    BoxManagedProcessInfo info = inSession(session, () -> box.startProcess(session, spec));
    try {
      outputs.follow(box, session, info.processId());
    } catch (BoxException e) {
      box.stopProcess(session, info.processId());
      throw e;
    }
    return Map.of(
        "session_id", session, "process_id", info.processId(), "status", info.status().wireName());
  }

  private Map<String, Object> processOutput(ToolArguments args) {
    String processId = args.requiredString("process_id");
    String session = session(args);
    ProcessOutputs.Report report = outputs.take(client.get(), session, processId);
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("process_id", processId);
    answer.put("output", report.output().text());
    answer.put("output_truncated", report.output().truncated());
    answer.put("running", report.running());
    answer.put("exit_code", report.exitCode());
    if (!report.note().isEmpty()) {
      answer.put("note", report.note());
    }
    return answer;
  }

  private Map<String, Object> stopProcess(ToolArguments args) {
    String processId = args.requiredString("process_id");
    String session = session(args);
    outputs.forget(session, processId);
    client.get().stopProcess(session, processId);
    return Map.of("stopped", processId);
  }

  private Map<String, Object> previewLink(ToolArguments args) {
    int port = args.integer("port", 0);
    int ttl = args.integer("ttl_sec", LINK_TTL);
    if (port < 1 || port > 65535) {
      throw new ToolArguments.BadArgument("argument 'port' must be 1 to 65535");
    }
    if (ttl < 1 || ttl > MAX_LINK_TTL) {
      throw new ToolArguments.BadArgument("argument 'ttl_sec' must be 1 to " + MAX_LINK_TTL);
    }
    String session = session(args);
    BoxPreviewLink link = inSession(session, () -> client.get().previewLink(session, port, ttl));
    return Map.of("url", link.url(), "expires_at", link.expiresAt().toString());
  }

  private Map<String, Object> deleteSession(ToolArguments args) {
    String session = args.requiredString("session_id");
    outputs.forgetSession(session);
    client.get().deleteSession(session);
    return Map.of("deleted", session);
  }

  private static String session(ToolArguments args) {
    return args.string("session_id", DEFAULT_SESSION).strip();
  }

  /** Runs {@code action} in {@code session}, creating the session once when it does not exist. */
  private <T> T inSession(String session, Supplier<T> action) {
    try {
      return action.get();
    } catch (BoxSessionNotFoundException e) {
      client.get().createSession(BoxSpec.builder(session).build());
      return action.get();
    }
  }

  /**
   * A tool that tells its progress when the call carries a progress token: {@code body} then gets
   * an {@link ExecOutput} whose every piece becomes a progress notification (the bytes so far as
   * the progress, the piece, cut for a model, as the message).
   */
  private static SyncToolSpecification progressing(
      McpSchema.Tool tool,
      BiFunction<ToolArguments, @Nullable ExecOutput, Map<String, Object>> body) {
    BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> handler =
        (exchange, request) -> {
          Object token = request.progressToken();
          ExecOutput progress = token == null ? null : new ProgressOutput(exchange, token);
          return call(tool.name(), args -> body.apply(args, progress), request);
        };
    return SyncToolSpecification.builder().tool(tool).callHandler(handler).build();
  }

  private static SyncToolSpecification spec(
      McpSchema.Tool tool, Function<ToolArguments, Map<String, Object>> body) {
    BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> handler =
        (exchange, request) -> call(tool.name(), body, request);
    return SyncToolSpecification.builder().tool(tool).callHandler(handler).build();
  }

  /** Runs a tool; every failure becomes an error result whose text says what went wrong. */
  private static CallToolResult call(
      String name, Function<ToolArguments, Map<String, Object>> body, CallToolRequest request) {
    try {
      return ToolResults.success(body.apply(new ToolArguments(request.arguments())));
    } catch (ToolArguments.BadArgument e) {
      return ToolResults.error(name + ": " + e.getMessage());
    } catch (BoxException e) {
      return ToolResults.error(name + ": " + e.code().wireName() + ": " + e.getMessage());
    } catch (UncheckedIOException e) {
      return ToolResults.error(name + ": " + e.getMessage());
    } catch (RuntimeException e) {
      log.warn("tool {} failed", name, e);
      return ToolResults.error(name + ": internal error: " + e.getClass().getSimpleName());
    }
  }
}
