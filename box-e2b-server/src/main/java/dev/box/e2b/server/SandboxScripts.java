package dev.box.e2b.server;

import dev.box.api.BoxExecutionResult;
import dev.box.core.session.SessionManager;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Runs the fixed scripts of envd's filesystem calls in a sandbox's session, as an exec of the
 * session (it counts as activity), with every path in the environment, never in the script: the
 * sandbox's own view resolves each path, so nothing reaches the host. The scripts' exit codes say
 * which refusal a failure is.
 */
final class SandboxScripts {
  /** How long one script may run. */
  private static final int TIMEOUT_SECONDS = 60;

  private static final String PRELUDE = load("entries.sh");

  private final SessionManager sessions;

  SandboxScripts(SessionManager sessions) {
    this.sessions = sessions;
  }

  /** The scripts, each a resource beside this class. */
  enum Script {
    STAT("stat.sh"),
    LIST("list.sh"),
    MKDIR("mkdir.sh"),
    MOVE("move.sh"),
    REMOVE("remove.sh"),
    WATCH("watch.sh");

    final String text;

    Script(String resource) {
      this.text = PRELUDE + load(resource);
    }
  }

  /**
   * Runs {@code script} in {@code sandbox}'s session and returns what it printed.
   *
   * @throws ConnectError the refusal the script's exit code names, with its message
   */
  String run(E2bSandbox sandbox, Script script, Map<String, String> env) {
    BoxExecutionResult result =
        sessions.exec(
            sandbox.spec().toBuilder()
                .cmd(script.text)
                .env(env)
                .timeoutSec(TIMEOUT_SECONDS)
                .build());
    Integer exit = result.exitCode();
    String reason = result.stderr().strip();
    if (exit == null) {
      throw new ConnectError("deadline_exceeded", "the operation ran out of time");
    }
    if (result.stdoutTruncatedBytes() > 0) {
      throw new ConnectError("resource_exhausted", "the answer is larger than Box returns");
    }
    return switch (exit) {
      case 0 -> result.stdout();
      case 3 -> throw ConnectError.notFound(reason);
      case 4 -> throw new ConnectError("already_exists", reason);
      case 5 -> throw ConnectError.invalidArgument(reason);
      default ->
          throw reason.contains("Permission denied") || reason.contains("Read-only file system")
              ? new ConnectError("permission_denied", reason)
              : new ConnectError("internal", reason.isEmpty() ? "exit code " + exit : reason);
    };
  }

  private static String load(String name) {
    try (InputStream in = SandboxScripts.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
