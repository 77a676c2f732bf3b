package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxValidationException;
import dev.box.core.backend.ProcessSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A process as {@code Start} asks for it: {@code {"process":{"cmd","args","envs","cwd"},
 * "stdin":bool,"tag"?}}. It runs as E2B's user {@code user}, the sandbox user, with {@code HOME} at
 * {@code /home/user}, the sandbox's {@code envVars}, then its own {@code envs}.
 *
 * @param cmd the program
 * @param args its arguments
 * @param envs its own environment
 * @param cwd its directory, absolute in the sandbox ({@code /home/user} when none is given)
 * @param stdin whether its stdin is kept open for {@code SendInput} (always, on a PTY)
 * @param tag the caller's name for it, or null
 * @param pty the size of the PTY it runs on ({@code sbx.pty.create}), or null for pipes
 */
record ProcessConfig(
    String cmd,
    List<String> args,
    Map<String, String> envs,
    String cwd,
    boolean stdin,
    @Nullable String tag,
    ProcessSpec.@Nullable Terminal pty) {

  /** Copies the collections. */
  ProcessConfig {
    args = List.copyOf(args);
    envs = Map.copyOf(envs);
  }

  /**
   * Reads a {@code Start} request.
   *
   * @throws ConnectError {@code invalid_argument} naming what is wrong
   */
  static ProcessConfig read(JsonNode request) {
    ProcessSpec.Terminal pty = size(request.path("pty"));
    JsonNode process = request.path("process");
    if (!process.isObject()) {
      throw ConnectError.invalidArgument("process is required and must be an object");
    }
    JsonNode cmd = process.path("cmd");
    if (!cmd.isTextual() || cmd.asText().isEmpty()) {
      throw ConnectError.invalidArgument("process.cmd is required and must be a string");
    }
    JsonNode cwd = process.path("cwd");
    String dir =
        cwd.isMissingNode() || cwd.isNull() || cwd.asText().isEmpty()
            ? CreateRequest.HOME
            : FilesystemRpc.path(process, "cwd");
    JsonNode tag = request.path("tag");
    return new ProcessConfig(
        clean(cmd.asText(), "process.cmd"),
        args(process.path("args")),
        envs(process.path("envs")),
        dir,
        bool(request.path("stdin")) || pty != null,
        tag.isTextual() && !tag.asText().isEmpty() ? tag.asText() : null,
        pty);
  }

  /**
   * The size of {@code pty} ({@code {"size":{"cols","rows"}}}), or null when it is absent.
   *
   * @throws ConnectError {@code invalid_argument} for a size that is not 1 to {@value
   *     ProcessSpec.Terminal#MAX} by as much
   */
  static ProcessSpec.@Nullable Terminal size(JsonNode pty) {
    if (pty.isMissingNode() || pty.isNull()) {
      return null;
    }
    JsonNode cols = pty.path("size").path("cols");
    JsonNode rows = pty.path("size").path("rows");
    if (!cols.isIntegralNumber() || !rows.isIntegralNumber()) {
      throw ConnectError.invalidArgument("pty.size needs cols and rows, whole numbers");
    }
    try {
      return new ProcessSpec.Terminal(cols.asInt(), rows.asInt());
    } catch (BoxValidationException e) {
      throw ConnectError.invalidArgument(String.valueOf(e.getMessage()));
    }
  }

  /**
   * What the process runs in the sandbox with {@code sandboxEnv} ({@code envVars}) under its own.
   */
  ProcessSpec spec(Map<String, String> sandboxEnv) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("HOME", CreateRequest.HOME);
    env.put("USER", EnvdCaller.USER);
    env.putAll(sandboxEnv);
    env.putAll(envs);
    List<String> argv = new ArrayList<>();
    argv.add(cmd);
    argv.addAll(args);
    return new ProcessSpec(new ProcessSpec.Argv(argv), cwd, env, stdin, 0, pty);
  }

  /** Its config as {@code List} answers it. */
  ObjectNode json(ObjectMapper mapper) {
    ObjectNode config = mapper.createObjectNode();
    config.put("cmd", cmd);
    args.forEach(config.putArray("args")::add);
    ObjectNode env = config.putObject("envs");
    envs.forEach(env::put);
    config.put("cwd", cwd);
    return config;
  }

  private static List<String> args(JsonNode node) {
    List<String> args = new ArrayList<>();
    if (node.isMissingNode() || node.isNull()) {
      return args;
    }
    if (!node.isArray()) {
      throw ConnectError.invalidArgument("process.args must be an array of strings");
    }
    for (JsonNode arg : node) {
      if (!arg.isTextual()) {
        throw ConnectError.invalidArgument("process.args must be an array of strings");
      }
      args.add(clean(arg.asText(), "process.args"));
    }
    return args;
  }

  private static Map<String, String> envs(JsonNode node) {
    Map<String, String> envs = new LinkedHashMap<>();
    if (node.isMissingNode() || node.isNull()) {
      return envs;
    }
    if (!node.isObject()) {
      throw ConnectError.invalidArgument("process.envs must be an object of strings");
    }
    for (Map.Entry<String, JsonNode> entry : node.properties()) {
      String name = entry.getKey();
      if (name.isEmpty() || name.indexOf('=') >= 0 || !entry.getValue().isTextual()) {
        throw ConnectError.invalidArgument(
            "process.envs: '" + name + "' must be a name without '=' with a string value");
      }
      envs.put(clean(name, "process.envs"), clean(entry.getValue().asText(), "process.envs"));
    }
    return envs;
  }

  private static boolean bool(JsonNode node) {
    if (node.isMissingNode() || node.isNull()) {
      return false;
    }
    if (!node.isBoolean()) {
      throw ConnectError.invalidArgument("stdin must be a boolean");
    }
    return node.asBoolean();
  }

  /** {@code value}, which must not hold NUL: no program argument or variable can. */
  private static String clean(String value, String field) {
    if (value.indexOf('\0') >= 0) {
      throw ConnectError.invalidArgument(field + " must not contain NUL");
    }
    return value;
  }
}
