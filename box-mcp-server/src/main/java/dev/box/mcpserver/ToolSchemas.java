package dev.box.mcpserver;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tools' names, descriptions and input schemas, as a model reads them in {@code tools/list}.
 */
final class ToolSchemas {
  private ToolSchemas() {}

  static final String SESSION_DESCRIPTION =
      "The sandbox session (default 'default'). Sessions are isolated sandboxes with a /workspace"
          + " directory that persists between calls.";

  private static final Map<String, Object> SESSION = prop("string", SESSION_DESCRIPTION);
  private static final Map<String, Object> FILE =
      prop("string", "The file, absolute or relative to /workspace.");
  private static final Map<String, Object> ENV =
      Map.of(
          "type",
          "object",
          "additionalProperties",
          Map.of("type", "string"),
          "description",
          "Environment variables for the command.");

  static McpSchema.Tool exec(int defaultTimeout, int maxTimeout) {
    return tool(
        "exec",
        "Runs a shell command (/bin/sh -c) in a sandbox session and returns its exit code, stdout"
            + " and stderr. Creates the session when it does not exist. Each stream is cut to"
            + " 4,000 characters (head and tail kept); *_truncated says whether it was.",
        Map.of(
            "cmd", prop("string", "The shell command to run."),
            "session_id", SESSION,
            "timeout_sec",
                bounded("Seconds before the command is killed", defaultTimeout, maxTimeout),
            "env", ENV,
            "workdir",
                prop("string", "Absolute directory to run in (default /workspace; created).")),
        List.of("cmd"));
  }

  static McpSchema.Tool readFile() {
    return tool(
        "read_file",
        "Reads a text file from an existing sandbox session. The content is cut to 4,000"
            + " characters (head and tail kept); content_truncated says whether it was.",
        Map.of(
            "path", FILE,
            "session_id", SESSION),
        List.of("path"));
  }

  static McpSchema.Tool writeFile() {
    return tool(
        "write_file",
        "Writes a text file (UTF-8) in a sandbox session, creating parent directories and the"
            + " session when missing, and replacing any file there.",
        Map.of(
            "path", FILE,
            "content", prop("string", "The whole content of the file."),
            "session_id", SESSION),
        List.of("path", "content"));
  }

  static McpSchema.Tool listFiles(int maxEntries) {
    return tool(
        "list_files",
        "Lists a directory of an existing sandbox session: name, type and size of each entry, at"
            + " most "
            + maxEntries
            + " (entries_truncated says whether there were more).",
        Map.of(
            "path", prop("string", "The directory (default /workspace)."), "session_id", SESSION),
        List.of());
  }

  static McpSchema.Tool startProcess() {
    return tool(
        "start_process",
        "Starts a long-running shell command (a server, a watcher) in a sandbox session, creating"
            + " the session when missing, and returns its process_id. Its stdout and stderr are"
            + " merged; read them with process_output, end it with stop_process.",
        Map.of(
            "cmd", prop("string", "The shell command to run (/bin/sh -c)."),
            "session_id", SESSION,
            "process_id",
                prop(
                    "string",
                    "An id for the process (default: a new one). Starting an id that runs"
                        + " replaces that process."),
            "env", ENV,
            "workdir", prop("string", "Absolute directory to run in (default /workspace).")),
        List.of("cmd"));
  }

  static McpSchema.Tool processOutput() {
    return tool(
        "process_output",
        "Returns what a process started with start_process wrote since the last call (cut to"
            + " 4,000 characters, head and tail kept; output_truncated says whether it was),"
            + " whether it is still running, and its exit code once it exited.",
        processArguments(),
        List.of("process_id"));
  }

  static McpSchema.Tool stopProcess() {
    return tool(
        "stop_process",
        "Stops a process started with start_process: SIGTERM to its whole process tree, then"
            + " SIGKILL after a grace period.",
        processArguments(),
        List.of("process_id"));
  }

  static McpSchema.Tool previewLink(int defaultTtl, int maxTtl) {
    return tool(
        "preview_link",
        "Gives a URL that opens, in any browser and without credentials, a web server listening on"
            + " a TCP port inside the sandbox (start it with start_process first), WebSockets"
            + " included. The link expires after ttl_sec seconds and dies with the session.",
        Map.of(
            "session_id", SESSION,
            "port", prop("integer", "The TCP port inside the sandbox, 1 to 65535."),
            "ttl_sec", bounded("How long the link works, in seconds", defaultTtl, maxTtl)),
        List.of("port"));
  }

  static McpSchema.Tool deleteSession() {
    return tool(
        "delete_session",
        "Deletes a sandbox session: stops everything in it and deletes its workspace.",
        Map.of("session_id", prop("string", "The session to delete.")),
        List.of("session_id"));
  }

  private static McpSchema.Tool tool(
      String name, String description, Map<String, Object> properties, List<String> required) {
    Map<String, Object> schema = new LinkedHashMap<>();
    schema.put("type", "object");
    schema.put("properties", new java.util.TreeMap<>(properties));
    schema.put("required", required);
    schema.put("additionalProperties", false);
    return McpSchema.Tool.builder().name(name).description(description).inputSchema(schema).build();
  }

  /** The arguments naming a process that start_process started. */
  private static Map<String, Object> processArguments() {
    return Map.of(
        "process_id", prop("string", "The id start_process returned."), "session_id", SESSION);
  }

  private static Map<String, Object> prop(String type, String description) {
    return Map.of("type", type, "description", description);
  }

  /** An integer argument described as {@code what}, with its default and its most. */
  private static Map<String, Object> bounded(String what, int defaultValue, int most) {
    return prop("integer", what + " (default " + defaultValue + ", at most " + most + ").");
  }
}
