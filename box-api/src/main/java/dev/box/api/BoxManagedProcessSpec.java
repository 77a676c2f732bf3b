package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A long-running process to start in a session, whose stdio is relayed over a WebSocket (a stdio
 * MCP server, typically).
 *
 * @param processId the process's key within its session; starting a running id replaces it
 * @param command the program, looked up on {@code PATH} inside the sandbox
 * @param args its arguments
 * @param env environment variables (their values are never echoed back)
 * @param cwd the absolute working directory inside the sandbox, created when missing
 * @param memoryMb a memory limit for this process in MiB, or 0 for the session's limit
 */
public record BoxManagedProcessSpec(
    String processId,
    String command,
    List<String> args,
    Map<String, String> env,
    String cwd,
    int memoryMb) {

  /** The most arguments a managed process may be given. */
  static final int MAX_ARGS = 4096;

  /** The process id used when a spec names none (and by the legacy relay route). */
  public static final String DEFAULT_PROCESS_ID = "default";

  /** Validates with the reference runtime's messages and copies the collections. */
  public BoxManagedProcessSpec {
    processId = processId.strip();
    if (processId.isEmpty()) {
      throw new BoxValidationException("process_id must not be empty");
    }
    ModelRules.rejectNul("process_id", processId);
    command = command.strip();
    if (command.isEmpty()) {
      throw new BoxValidationException("command must not be empty");
    }
    ModelRules.rejectNul("command", command);
    ModelRules.argument("command", command);
    args.forEach(a -> ModelRules.rejectNul("args", a));
    args.forEach(a -> ModelRules.argument("an argument", a));
    if (args.size() > MAX_ARGS) {
      throw new BoxValidationException(
          "args has " + args.size() + " entries; the most is " + MAX_ARGS);
    }
    args = List.copyOf(args);
    env.forEach(ModelRules::envEntry);
    ModelRules.envSize(env);
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
    String strippedCwd = cwd.strip();
    if (!strippedCwd.startsWith("/")) {
      throw new BoxValidationException("cwd must be an absolute path inside the sandbox");
    }
    ModelRules.rejectNul("cwd", strippedCwd);
    cwd = strippedCwd;
    if (memoryMb != 0 && memoryMb < 32) {
      throw new BoxValidationException("memory_mb must be 0 (the session's) or at least 32");
    }
  }

  /** A spec for {@code command} with the defaults: id "default", cwd /workspace. */
  public static BoxManagedProcessSpec of(String command, String... args) {
    return new BoxManagedProcessSpec(
        DEFAULT_PROCESS_ID, command, List.of(args), Map.of(), BoxSpec.DEFAULT_MOUNT_PATH, 0);
  }

  /** A copy with another process id. */
  public BoxManagedProcessSpec withProcessId(String id) {
    return new BoxManagedProcessSpec(id, command, args, env, cwd, memoryMb);
  }

  /** A copy with these environment variables. */
  public BoxManagedProcessSpec withEnv(Map<String, String> newEnv) {
    return new BoxManagedProcessSpec(processId, command, args, newEnv, cwd, memoryMb);
  }

  @JsonCreator
  static BoxManagedProcessSpec fromJson(
      @JsonProperty("process_id") @Nullable String processId,
      @JsonProperty("command") @Nullable String command,
      @JsonProperty("args") @Nullable List<String> args,
      @JsonProperty("env") @Nullable Map<String, String> env,
      @JsonProperty("cwd") @Nullable String cwd,
      @JsonProperty("memory_mb") @Nullable Integer memoryMb) {
    Map<String, String> environment = new LinkedHashMap<>();
    if (env != null) {
      env.forEach((k, v) -> environment.put(k, v == null ? "" : v));
    }
    return new BoxManagedProcessSpec(
        processId == null ? DEFAULT_PROCESS_ID : processId,
        command == null ? "" : command,
        args == null ? List.of() : args.stream().map(String::valueOf).toList(),
        environment,
        cwd == null ? BoxSpec.DEFAULT_MOUNT_PATH : cwd,
        memoryMb == null ? 0 : memoryMb);
  }
}
