package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.session.ProcessManager;
import dev.box.e2b.server.SandboxScripts.Script;
import io.javalin.http.Context;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The directory watches of envd's {@code filesystem.Filesystem} service: the stream {@code
 * WatchDir} and the polled {@code CreateWatcher}, {@code GetWatcherEvents}, {@code RemoveWatcher}.
 * Each watch is a {@code watch.sh} spawned in the sandbox's session, as a command is, so it works
 * on every backend and sees what the sandbox sees; it snapshots the directory every {@link
 * #INTERVAL} and {@link DirWatch} turns the differences into events. The path is in the process's
 * environment, never in its script.
 */
final class WatchRpc {
  /** The unary calls. */
  static final Set<String> UNARY = Set.of("CreateWatcher", "GetWatcherEvents", "RemoveWatcher");

  /** How often a watched directory is looked at. */
  static final Duration INTERVAL = Duration.ofMillis(500);

  /** How deep a recursive watch looks. */
  private static final int RECURSIVE_DEPTH = 4096;

  private final ProcessManager processes;
  private final ObjectMapper mapper;

  WatchRpc(ProcessManager processes, ObjectMapper mapper) {
    this.processes = processes;
    this.mapper = mapper;
  }

  /**
   * Serves {@code WatchDir} on {@code stream}: a start message once the watch is in place, then an
   * event per change, keepalives while idle, until the client goes, the watch ends, or the call's
   * {@code Connect-Timeout-Ms} passes; then the watch's process is killed.
   */
  void stream(Context ctx, E2bSandbox sandbox, JsonNode request, ConnectStream stream)
      throws IOException, InterruptedException {
    Duration keepalive = ProcessRpc.keepalive(ctx.header("Keepalive-Ping-Interval"));
    @Nullable Duration timeout = ProcessRpc.timeout(ctx.header("Connect-Timeout-Ms"));
    long deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
    try (DirWatch watch = open(sandbox, request)) {
      stream.send(message("start"));
      while (true) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          stream.end(
              new ConnectError(
                  "deadline_exceeded", "the watch ran out of time (Connect-Timeout-Ms)"));
          return;
        }
        switch (watch.next(Math.min(left, keepalive.toNanos()))) {
          case null -> stream.send(message("keepalive"));
          case DirWatch.Fired fired -> {
            ObjectNode message = mapper.createObjectNode();
            message.set("filesystem", event(fired.event()));
            stream.send(message);
          }
          case DirWatch.Ended ended -> {
            stream.end(ended.error());
            return;
          }
        }
      }
    }
  }

  /** Answers the unary {@code method} ({@link #UNARY}) with {@code request} on {@code sandbox}. */
  ObjectNode call(E2bSandbox sandbox, String method, JsonNode request) throws InterruptedException {
    WatchTable table = sandbox.watches();
    ObjectNode answer = mapper.createObjectNode();
    switch (method) {
      case "CreateWatcher" -> answer.put("watcherId", table.keep(open(sandbox, request)));
      case "GetWatcherEvents" -> {
        String id = watcherId(request);
        ArrayNode events = answer.putArray("events");
        try {
          table.find(id).take().forEach(event -> events.add(event(event)));
        } catch (ConnectError ended) {
          table.remove(id);
          throw ended;
        }
      }
      case "RemoveWatcher" -> table.remove(watcherId(request));
      default ->
          throw new ConnectError("unimplemented", "no method filesystem.Filesystem/" + method);
    }
    return answer;
  }

  /** Starts the watch {@code request} asks for, once its baseline snapshot came. */
  private DirWatch open(E2bSandbox sandbox, JsonNode request) throws InterruptedException {
    String path = FilesystemRpc.path(request, "path");
    boolean recursive = flag(request, "recursive");
    if (flag(request, "includeEntry")) {
      throw new ConnectError("unimplemented", "includeEntry is not served by Box yet");
    }
    Map<String, String> env =
        Map.of(
            "BOX_PATH", path,
            "BOX_DEPTH", Integer.toString(recursive ? RECURSIVE_DEPTH : 1),
            "BOX_INTERVAL", Double.toString(INTERVAL.toMillis() / 1000.0));
    ProcessSpec spec =
        new ProcessSpec(new ProcessSpec.Shell(Script.WATCH.text), CreateRequest.HOME, env, false);
    return sandbox
        .watches()
        .open(onClose -> DirWatch.start(processes.spawn(sandbox.sessionId(), spec), onClose));
  }

  private ObjectNode event(DirSnapshot.Event event) {
    ObjectNode node = mapper.createObjectNode();
    node.put("name", event.name());
    node.put("type", event.type());
    return node;
  }

  /**
   * A message of {@code WatchDir} without fields: {@code {"start":{}}}, {@code {"keepalive":{}}}.
   */
  private ObjectNode message(String kind) {
    ObjectNode message = mapper.createObjectNode();
    message.putObject(kind);
    return message;
  }

  private static String watcherId(JsonNode request) {
    JsonNode id = request.path("watcherId");
    if (!id.isTextual() || id.asText().isEmpty()) {
      throw ConnectError.invalidArgument("watcherId is required and must be a string");
    }
    return id.asText();
  }

  private static boolean flag(JsonNode request, String field) {
    JsonNode value = request.path(field);
    if (value.isMissingNode() || value.isNull()) {
      return false;
    }
    if (!value.isBoolean()) {
      throw ConnectError.invalidArgument(field + " must be a boolean");
    }
    return value.asBoolean();
  }
}
