package dev.box.langchain4j;

import dev.box.agenthost.AgentHost;
import dev.box.agenthost.ExecRequest;
import dev.box.agenthost.ExecToolResult;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import org.jspecify.annotations.Nullable;

/**
 * Tools a model calls to work in a Box sandbox: run a shell command, read, write and list files.
 * Give an instance to LangChain4j's {@code AiServices.builder(...).tools(...)}; every call runs
 * through the {@link AgentHost}, so its profile, output cut, quota and error ring apply.
 *
 * <p>All calls of one instance run in one session, whose id is fixed when it is made (for example
 * {@code host.sessionId(context, SessionIdTemplate.PER_USER)}), so files persist between calls.
 * Files are read and written with commands inside the sandbox, never on the host.
 *
 * <pre>{@code
 * Assistant assistant = AiServices.builder(Assistant.class)
 *     .chatModel(model)
 *     .tools(new BoxTools(host, host.sessionId(context, null)))
 *     .build();
 * }</pre>
 */
public final class BoxTools {
  private final AgentHost host;
  private final String sessionId;

  /** Tools that run in the session {@code sessionId} of {@code host}. */
  public BoxTools(AgentHost host, String sessionId) {
    this.host = host;
    this.sessionId = sessionId;
  }

  /** The session the tools run in. */
  public String sessionId() {
    return sessionId;
  }

  /** Runs a shell command and returns its outcome. */
  @Tool(
      "Runs a shell command in an isolated Linux sandbox and returns its exit code, stdout and"
          + " stderr. Use it for exact calculations, data processing and inspecting files; the"
          + " working directory /workspace persists between calls.")
  public ExecToolResult exec(
      @P("the command, run by /bin/sh -c") String command,
      @P(value = "the absolute working directory, /workspace by default", required = false)
          @Nullable String workdir,
      @P(value = "the timeout in seconds, 30 by default", required = false)
          @Nullable Integer timeoutSec) {
    return host.exec(
        sessionId, ExecRequest.builder(command).workdir(workdir).timeoutSec(timeoutSec).build());
  }

  /** Reads a text file. */
  @Tool("Reads a text file in the sandbox and returns its content.")
  public String readFile(@P("the file's path, absolute or relative to /workspace") String path) {
    ExecToolResult out =
        host.exec(
            sessionId, ExecRequest.builder("cat -- \"$BOX_PATH\"").env("BOX_PATH", path).build());
    return out.ok() ? out.stdout() : "Cannot read " + path + ": " + out.stderr().strip();
  }

  /** Writes a text file, creating its directories. */
  @Tool("Writes a text file in the sandbox, replacing it if it exists, creating its directories.")
  public String writeFile(
      @P("the file's path, absolute or relative to /workspace") String path,
      @P("the complete new content") String content) {
    ExecToolResult out =
        host.exec(
            sessionId,
            ExecRequest.builder(
                    "mkdir -p -- \"$(dirname -- \"$BOX_PATH\")\""
                        + " && printf '%s' \"$BOX_CONTENT\" > \"$BOX_PATH\"")
                .env("BOX_PATH", path)
                .env("BOX_CONTENT", content)
                .build());
    return out.ok()
        ? "Wrote " + content.codePointCount(0, content.length()) + " characters to " + path
        : "Cannot write " + path + ": " + out.stderr().strip();
  }

  /** Lists a directory. */
  @Tool("Lists the entries of a directory in the sandbox, one per line, directories ending in /.")
  public String listFiles(
      @P(value = "the directory, /workspace by default", required = false) @Nullable String path) {
    ExecToolResult out =
        host.exec(
            sessionId,
            ExecRequest.builder("ls -1Ap -- \"${BOX_PATH:-/workspace}\"")
                .env("BOX_PATH", path == null ? "" : path)
                .build());
    return out.ok() ? out.stdout() : "Cannot list " + path + ": " + out.stderr().strip();
  }
}
