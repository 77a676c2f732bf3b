package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.session.SessionManager;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;

/**
 * envd at {@code /e2b/envd}, for every sandbox: each request is routed by its sandbox id and needs
 * the sandbox's access token ({@link EnvdCaller}). Served: {@code /health}, {@code /envs}, {@code
 * /files} ({@link FileTransfer}) and the unary filesystem calls ({@link FilesystemRpc}) over
 * Connect's JSON codec. The process service is not served yet: its calls answer Connect's {@code
 * unimplemented}, in a stream's end message for the streaming ones, where the SDK reads it.
 */
final class EnvdRoutes {
  static final String PREFIX = ControlPlaneRoutes.PREFIX + "/envd";
  private static final String JSON = "application/json";
  private static final String STREAM = "application/connect+";
  private static final int END_STREAM = 0x02;

  private final EnvdCaller caller;
  private final FilesystemRpc filesystem;
  private final FileTransfer files;
  private final E2bAnswers answers;
  private final ObjectMapper mapper;

  /** envd for {@code sandboxes}, whose uploads spool in {@code spool}. */
  EnvdRoutes(E2bSandboxes sandboxes, E2bAnswers answers, Path spool) {
    SessionManager sessions = sandboxes.sessions();
    this.answers = answers;
    this.mapper = answers.mapper();
    this.caller = new EnvdCaller(sandboxes);
    this.filesystem = new FilesystemRpc(new SandboxScripts(sessions), mapper);
    this.files = new FileTransfer(sessions.files(), caller, answers, spool);
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
    answers.rpc(
        ctx,
        c -> {
          E2bSandbox sandbox = caller.sandbox(c);
          String method = c.pathParam("method");
          if (isStream(c)) {
            endStream(c, "filesystem.Filesystem/" + method + " is not served by Box yet");
            return;
          }
          JsonNode request = unaryRequest(c);
          EnvdCaller.checkRpcUser(c);
          ObjectNode answer = filesystem.call(sandbox, method, request);
          answers.json(c, 200, answer);
        });
  }

  private void process(Context ctx) {
    answers.rpc(
        ctx,
        c -> {
          caller.sandbox(c);
          String message =
              "process.Process/"
                  + c.pathParam("method")
                  + " is not served by Box yet: commands and PTYs need Box's streaming exec";
          if (isStream(c)) {
            endStream(c, message);
            return;
          }
          throw new ConnectError("unimplemented", message);
        });
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
    ObjectNode end = mapper.createObjectNode();
    ObjectNode error = end.putObject("error");
    error.put("code", "unimplemented");
    error.put("message", message);
    byte[] payload = mapper.writeValueAsString(end).getBytes(StandardCharsets.UTF_8);
    ByteBuffer framed = ByteBuffer.allocate(5 + payload.length);
    framed.put((byte) END_STREAM).putInt(payload.length).put(payload);
    ctx.status(200).contentType(STREAM + "json").result(framed.array());
  }
}
