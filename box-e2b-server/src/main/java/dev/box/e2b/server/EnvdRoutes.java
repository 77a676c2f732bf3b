package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.session.SessionManager;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
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
    // The SDK's signed URLs drop E2B_SANDBOX_URL's path: they reach the root (EnvdCaller).
    config.routes.get(EnvdCaller.FILES, ctx -> rest(ctx, files::download));
    config.routes.post(EnvdCaller.FILES, ctx -> rest(ctx, files::upload));
    config.routes.post(PREFIX + "/filesystem.Filesystem/{method}", this::filesystem);
    config.routes.post(PREFIX + "/process.Process/{method}", this::process);
  }

  /** A REST route: the sandbox and its token checked first, E2B's error body on failure. */
  private void rest(Context ctx, E2bAnswers.Action action) {
    answers.control(ctx, caller::sandbox, action);
  }

  private void filesystem(Context ctx) {
    String method = ctx.pathParam("method");
    call(
        ctx,
        "filesystem.Filesystem",
        method.equals("WatchDir") ? watches::stream : null,
        (sandbox, request) ->
            WatchRpc.UNARY.contains(method)
                ? watches.call(sandbox, method, request)
                : filesystem.call(sandbox, method, request));
  }

  private void process(Context ctx) {
    String method = ctx.pathParam("method");
    StreamCall stream =
        method.equals(ProcessRpc.CLIENT_STREAM)
            ? (c, sandbox, request, answer) -> processes.streamInput(sandbox, request, answer)
            : ProcessRpc.STREAMS.contains(method)
                ? (c, sandbox, request, answer) ->
                    processes.stream(c, sandbox, method, request, answer)
                : null;
    call(
        ctx,
        "process.Process",
        stream,
        (sandbox, request) -> processes.call(sandbox, method, request));
  }

  /** Answers one unary call on a sandbox. */
  private interface UnaryCall {
    ObjectNode answer(E2bSandbox sandbox, JsonNode request) throws InterruptedException;
  }

  /** Serves one server-streaming call on a sandbox. */
  private interface StreamCall {
    void serve(Context ctx, E2bSandbox sandbox, JsonNode request, ConnectStream stream)
        throws IOException, InterruptedException;
  }

  /**
   * Answers a call of {@code service}: after the sandbox's checks and its codec's, a streaming
   * request is served by {@code stream} (or refused in its end message when the method has none),
   * any other by {@code unary}.
   */
  private void call(Context ctx, String service, @Nullable StreamCall stream, UnaryCall unary) {
    answers.rpc(
        ctx,
        c -> {
          E2bSandbox sandbox = caller.sandbox(c);
          String method = c.pathParam("method");
          EnvdCodec codec = EnvdCodec.of(c, mapper, service, method);
          if (EnvdCodec.isStream(c)) {
            ConnectStream answer = new ConnectStream(c, mapper, codec);
            if (stream == null) {
              answer.end(
                  new ConnectError(
                      "unimplemented",
                      service + "/" + method + " is not served by Box as a stream"));
            } else {
              serve(c, sandbox, answer, stream);
            }
            return;
          }
          byte[] body = Bodies.bytes(c);
          JsonNode request = codec.decode(body, 0, body.length);
          EnvdCaller.checkRpcUser(c);
          codec.answer(c, unary.answer(sandbox, request));
        });
  }

  /** A server-streaming call: every answer streams, a refusal in the end message. */
  private void serve(Context ctx, E2bSandbox sandbox, ConnectStream stream, StreamCall call)
      throws InterruptedException {
    try {
      // A client stream's first message comes alone; the call reads the others as they come.
      boolean client = ctx.pathParam("method").equals(ProcessRpc.CLIENT_STREAM);
      JsonNode request = client ? stream.next() : stream.request();
      if (request == null) {
        throw ConnectError.invalidArgument("the stream has no message");
      }
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
}
