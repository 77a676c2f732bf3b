package dev.box.langchain4j;

import dev.box.agenthost.AgentFiles;
import dev.box.agenthost.AgentHost;
import dev.box.agenthost.ExecRequest;
import dev.box.agenthost.ExecToolResult;
import dev.box.api.BoxException;
import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import java.io.UncheckedIOException;
import org.jspecify.annotations.Nullable;

/**
 * Tools a model calls to work in a Box sandbox: run a shell command, read, write and list files.
 * Give an instance to LangChain4j's {@code AiServices.builder(...).tools(...)}; every call runs
 * through the {@link AgentHost}, so its profile, output cut, quota and error ring apply.
 *
 * <p>All calls of one instance run in one session, whose id is fixed when it is made (for example
 * {@code host.sessionId(context, SessionIdTemplate.PER_USER)}), so files persist between calls.
 * Files are read and written through the server's files API ({@link AgentFiles}), never on the
 * host: a write takes any content up to the server's file limit, and a read is cut for a model as
 * exec output is, with the notice of how much was cut.
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
    try {
      return host.files().read(sessionId, path).text();
    } catch (BoxException | UncheckedIOException e) {
      return "Cannot read " + path + ": " + e.getMessage();
    }
  }

  /** Writes a text file, creating its directories. */
  @Tool("Writes a text file in the sandbox, replacing it if it exists, creating its directories.")
  public String writeFile(
      @P("the file's path, absolute or relative to /workspace") String path,
      @P("the complete new content") String content) {
    try {
      host.files().write(sessionId, path, content);
    } catch (BoxException e) {
      return "Cannot write " + path + ": " + e.getMessage();
    }
    return "Wrote " + content.codePointCount(0, content.length()) + " characters to " + path;
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
