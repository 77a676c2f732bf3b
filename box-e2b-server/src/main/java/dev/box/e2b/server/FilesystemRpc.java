package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxValidationException;
import dev.box.core.files.SandboxPath;
import dev.box.e2b.server.SandboxScripts.Script;
import java.util.Map;

/**
 * The unary calls of envd's {@code filesystem.Filesystem} service (Stat, ListDir, MakeDir, Move,
 * Remove) on a sandbox, over Connect's JSON codec; a relative path starts at the user's home. The
 * watches are {@link WatchRpc}'s.
 */
final class FilesystemRpc {
  /** The deepest ListDir served. */
  private static final int MAX_DEPTH = 64;

  private final SandboxScripts scripts;
  private final EntryInfos entries;
  private final ObjectMapper mapper;

  FilesystemRpc(SandboxScripts scripts, ObjectMapper mapper) {
    this.scripts = scripts;
    this.entries = new EntryInfos(mapper);
    this.mapper = mapper;
  }

  /** Answers {@code method} with {@code request} on {@code sandbox}. */
  ObjectNode call(E2bSandbox sandbox, String method, JsonNode request) {
    ObjectNode answer = mapper.createObjectNode();
    switch (method) {
      case "Stat" ->
          answer.set("entry", entries.one(run(sandbox, Script.STAT, path(request, "path"))));
      case "ListDir" -> {
        int depth = depth(request.path("depth"));
        String listed =
            scripts.run(
                sandbox,
                Script.LIST,
                Map.of("BOX_PATH", path(request, "path"), "BOX_DEPTH", Integer.toString(depth)));
        answer.set("entries", entries.all(listed));
      }
      case "MakeDir" ->
          answer.set("entry", entries.one(run(sandbox, Script.MKDIR, path(request, "path"))));
      case "Move" -> {
        Map<String, String> env =
            Map.of(
                "BOX_SOURCE", path(request, "source"),
                "BOX_DESTINATION", path(request, "destination"));
        answer.set("entry", entries.one(scripts.run(sandbox, Script.MOVE, env)));
      }
      case "Remove" -> {
        String path = path(request, "path");
        if (path.equals("/")) {
          throw ConnectError.invalidArgument("the root directory cannot be removed");
        }
        run(sandbox, Script.REMOVE, path);
      }
      case "WatchDir" ->
          throw ConnectError.invalidArgument(
              "WatchDir is a server stream: send it as application/connect+json");
      default ->
          throw new ConnectError("unimplemented", "no method filesystem.Filesystem/" + method);
    }
    return answer;
  }

  private String run(E2bSandbox sandbox, Script script, String path) {
    return scripts.run(sandbox, script, Map.of("BOX_PATH", path));
  }

  /** The path field {@code field} of {@code request}, absolute in the sandbox. */
  static String path(JsonNode request, String field) {
    JsonNode value = request.path(field);
    if (!value.isTextual()) {
      throw ConnectError.invalidArgument(field + " is required and must be a string");
    }
    try {
      return SandboxPath.resolve(value.asText(), CreateRequest.HOME);
    } catch (BoxValidationException e) {
      throw ConnectError.invalidArgument(field + ": " + e.getMessage());
    }
  }

  private static int depth(JsonNode value) {
    if (value.isMissingNode() || value.isNull()) {
      return 1;
    }
    int depth =
        value.isTextual() ? parse(value.asText()) : value.isIntegralNumber() ? value.asInt() : -1;
    if (depth < 1 || depth > MAX_DEPTH) {
      throw ConnectError.invalidArgument("depth must be 1 to " + MAX_DEPTH);
    }
    return depth;
  }

  private static int parse(String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
