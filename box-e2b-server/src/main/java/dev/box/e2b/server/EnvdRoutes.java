package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.session.SessionManager;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * envd at {@code /e2b/envd}, for every sandbox: each request is routed by its sandbox id and needs
 * the sandbox's access token ({@link EnvdCaller}). Served: {@code /health}, {@code /envs}, {@code
 * /files} ({@link FileTransfer}), the unary filesystem calls ({@link FilesystemRpc}), the directory
 * watches ({@link WatchRpc}) and the process service ({@link ProcessRpc}) over Connect's JSON
 * codec. A stream's refusal is in its end message with status 200, where the SDK reads it; only the
 * sandbox's checks (401, 502) come before the stream, as HTTP statuses.
 */
final class EnvdRoutes {
  private static final Logger log = LoggerFactory.getLogger(EnvdRoutes.class);
  static final String PREFIX = ControlPlaneRoutes.PREFIX + "/envd";
  private static final String JSON = "application/json";
  private static final String STREAM = "application/connect+";

  private final EnvdCaller caller;
  private final FilesystemRpc filesystem;
  private final FileTransfer files;
  private final ProcessRpc processes;
  private final WatchRpc watches;
  private final E2bAnswers answers;
  private final ObjectMapper mapper;

  /** envd for {@code sandboxes}, whose uploads spool in {@code spool}. */
  EnvdRoutes(E2bSandboxes sandboxes, E2bAnswers answers, ProcessRpc processes, Path spool) {
    SessionManager sessions = sandboxes.sessions();
    this.answers = answers;
    this.mapper = answers.mapper();
    this.caller = new EnvdCaller(sandboxes);
    this.filesystem = new FilesystemRpc(new SandboxScripts(sessions), mapper);
    this.files = new FileTransfer(sessions.files(), caller, answers, spool);
    this.processes = processes;
    this.watches = new WatchRpc(sessions.processes(), mapper);
  }

  void register(JavalinConfig config) {
    config.routes.get(PREFIX + "/health", ctx -> rest(ctx, c -> c.status(204)));
    config.routes.get(
        PREFIX + "/envs", ctx -> rest(ctx, c -> answers.json(c, 200, caller.sandbox(c).envVars())));
    config.routes.get(PREFIX + "/files", ctx -> rest(ctx, files::download));
    config.routes.post(PREFIX + "/files", ctx -> rest(ctx, files::upload));
    config.routes.post(PREFIX + "/filesystem.Filesystem/{method}", this::filesystem);
    config.routes.post(PREFIX + "/process.Process/{method}", this::process);
  }

  /** A REST route: the sandbox and its token checked first, E2B's error body on failure. */
  private void rest(Context ctx, E2bAnswers.Action action) {
    answers.control(ctx, caller::sandbox, action);
  }

  private void filesystem(Context ctx) {
    String method = ctx.pathParam("method");
    if (isStream(ctx) && method.equals("WatchDir")) {
      answers.rpc(ctx, c -> stream(c, watches::stream));
      return;
    }
    answers.rpc(
        ctx,
        c -> {
          E2bSandbox sandbox = caller.sandbox(c);
          if (isStream(c)) {
            endStream(c, "filesystem.Filesystem/" + method + " is not served by Box as a stream");
            return;
          }
          JsonNode request = unaryRequest(c);
          EnvdCaller.checkRpcUser(c);
          ObjectNode answer =
              WatchRpc.UNARY.contains(method)
                  ? watches.call(sandbox, method, request)
                  : filesystem.call(sandbox, method, request);
          answers.json(c, 200, answer);
        });
  }

  private void process(Context ctx) {
    String method = ctx.pathParam("method");
    if (isStream(ctx) && ProcessRpc.STREAMS.contains(method)) {
      answers.rpc(
          ctx,
          c ->
              stream(
                  c,
                  (call, sandbox, request, stream) ->
                      processes.stream(call, sandbox, method, request, stream)));
      return;
    }
    answers.rpc(
        ctx,
        c -> {
          E2bSandbox sandbox = caller.sandbox(c);
          if (isStream(c)) {
            endStream(c, "process.Process/" + method + " is not served by Box as a stream");
            return;
          }
          answers.json(c, 200, processes.call(sandbox, method, unaryRequest(c)));
        });
  }

  /** Serves one server-streaming call on a sandbox. */
  private interface StreamCall {
    void serve(Context ctx, E2bSandbox sandbox, JsonNode request, ConnectStream stream)
        throws IOException, InterruptedException;
  }

  /** A server-streaming call: after the sandbox's checks, every answer streams. */
  private void stream(Context ctx, StreamCall call) throws InterruptedException {
    E2bSandbox sandbox = caller.sandbox(ctx);
    ConnectStream stream = new ConnectStream(ctx, mapper);
    try {
      JsonNode request = ConnectStream.request(ctx, mapper);
      EnvdCaller.checkRpcUser(ctx);
      call.serve(ctx, sandbox, request, stream);
    } catch (ConnectStream.Gone gone) {
      log.debug("{} {}: {}", ctx.method(), ctx.path(), gone.getMessage());
    } catch (Exception e) {
      try {
        stream.end(E2bAnswers.connectError(e, ctx));
      } catch (IOException gone) {
        log.debug("{} {}: {}", ctx.method(), ctx.path(), gone.getMessage());
      }
    }
  }

  /** The JSON body of a unary call; another codec is refused. */
  private JsonNode unaryRequest(Context ctx) throws IOException {
    String type = ctx.contentType();
    if (type == null || !type.toLowerCase(Locale.ROOT).startsWith(JSON)) {
      throw ConnectError.invalidArgument(
          "Box serves Connect's JSON codec only (Content-Type: application/json), not " + type);
    }
    JsonNode request = Bodies.json(ctx, mapper);
    if (!request.isObject()) {
      throw ConnectError.invalidArgument("the request must be a JSON object");
    }
    return request;
  }

  private static boolean isStream(Context ctx) {
    String type = ctx.contentType();
    return type != null && type.toLowerCase(Locale.ROOT).startsWith(STREAM);
  }

  /**
   * Answers a streaming call with its end message only, carrying {@code unimplemented}: a stream's
   * HTTP status is all the SDK reads of a non-200 answer, and none maps to unimplemented.
   */
  private void endStream(Context ctx, String message) throws IOException {
    new ConnectStream(ctx, mapper).end(new ConnectError("unimplemented", message));
  }
}
