package dev.box.langchain4j;

import dev.box.agenthost.AgentHost;
import dev.box.agenthost.ExecRequest;
import dev.box.agenthost.ExecToolResult;
import dev.langchain4j.code.CodeExecutionEngine;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A LangChain4j {@link CodeExecutionEngine} that runs code in a Box sandbox: each call runs the
 * code with an interpreter ({@code python3} unless told otherwise) in one session, so files the
 * code writes stay for the next call. The code is uploaded through the server's files API ({@link
 * dev.box.agenthost.AgentFiles}) to a file in the sandbox's {@code /tmp}, which the interpreter
 * reads as its standard input; the file is removed before the interpreter starts. The code never
 * travels on a command line or in an environment variable, so its size is bounded only by the
 * server's file limit.
 *
 * <p>It returns what the code printed, cut for a model as the agent host cuts it; when the code
 * fails, it returns the exit code and standard error instead, so that a model can correct it.
 * Failures of Box itself (unavailable, invalid settings) are thrown as {@link
 * dev.box.api.BoxException}s.
 *
 * <pre>{@code
 * CodeExecutionEngine engine = new BoxCodeExecutionEngine(host, "calc");
 * String answer = engine.execute("print(2 ** 64)"); // "18446744073709551616\n"
 * }</pre>
 */
public final class BoxCodeExecutionEngine implements CodeExecutionEngine {
  private final AgentHost host;
  private final String sessionId;
  private final String interpreter;

  /** An engine that runs Python code in the session {@code sessionId}. */
  public BoxCodeExecutionEngine(AgentHost host, String sessionId) {
    this(host, sessionId, "python3");
  }

  /**
   * An engine that runs code with {@code interpreter}, a command that reads its program from
   * standard input (such as {@code python3}, {@code node} or {@code sh}), in {@code sessionId}.
   */
  public BoxCodeExecutionEngine(AgentHost host, String sessionId, String interpreter) {
    this.host = host;
    this.sessionId = sessionId;
    this.interpreter = interpreter;
  }

  @Override
  public String execute(String code) {
    String file =
        "/tmp/.box-code-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    host.files().write(sessionId, file, code);
    ExecToolResult out =
        host.exec(
            sessionId,
            ExecRequest.builder(
                    "{ rm -f -- \"$BOX_CODE_FILE\"; exec "
                        + interpreter
                        + " -; } < \"$BOX_CODE_FILE\"")
                .env("BOX_CODE_FILE", file)
                .build());
    if (out.ok()) {
      return out.stdout();
    }
    String why = out.exitCode() == null ? "timed out" : "exit code " + out.exitCode();
    return "The code failed (" + why + "):\n" + out.stderr() + out.stdout();
  }
}
