package dev.box.guard;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The exec agent: a small static program ({@code src/main/c/box-agent.c}) that lives in each
 * sandbox, connected to the server over a Unix socket mounted into that sandbox only, and forks the
 * sandbox's processes on request. A backend mounts {@link #binary()} read-only at {@link
 * #SANDBOX_PATH} and the directory of the socket at {@link #SOCKET_DIR}, and runs the agent under
 * box-guard, so that it and all it forks are the sandbox user under the syscall filter.
 */
public final class ExecAgent {
  /** Where the agent is mounted inside every sandbox. */
  public static final String SANDBOX_PATH = "/.box/box-agent";

  /** Where the directory of the agent's socket is mounted inside a sandbox. */
  public static final String SOCKET_DIR = "/.box/agent";

  /** The socket's name in {@link #SOCKET_DIR}. */
  public static final String SOCKET_NAME = "socket";

  private static final String NAME = "box-agent";
  private static final ConcurrentHashMap<Path, ExecAgent> INSTALLED = new ConcurrentHashMap<>();

  private final @Nullable Path binary;
  private final String reason;

  private ExecAgent(@Nullable Path binary, String reason) {
    this.binary = binary;
    this.reason = reason;
  }

  /**
   * Extracts the agent for this host's arch to {@code <dataDir>/bin/box-agent} (mode 0755; an
   * identical file is reused), once per data directory and JVM unless the file changed since.
   *
   * @return the installed agent, or an unavailable one whose {@link #reason()} says why
   */
  public static ExecAgent install(Path dataDir) {
    return HelperBinaries.installCached(
        INSTALLED, dataDir, NAME, ExecAgent::available, ExecAgent::extract);
  }

  /** An agent that is not available, for {@code reason}. */
  public static ExecAgent unavailable(String reason) {
    return new ExecAgent(null, reason);
  }

  private static ExecAgent extract(Path target) {
    try {
      byte[] bytes = HelperBinaries.bytes(NAME);
      if (bytes == null) {
        return unavailable(
            "no box-agent binary for this arch ("
                + System.getProperty("os.arch")
                + ") in this build");
      }
      HelperBinaries.install(target, bytes);
      return new ExecAgent(target, "box-agent at " + target);
    } catch (IOException e) {
      return unavailable("cannot install box-agent at " + target + ": " + e);
    }
  }

  /** The agent on this host, or null when it is not available. */
  public @Nullable Path binary() {
    return binary;
  }

  /** Whether the agent can be used. */
  public boolean available() {
    return binary != null;
  }

  /** Why the agent is unavailable, or where it is. */
  public String reason() {
    return reason;
  }

  /**
   * The command that, run inside a sandbox, relays its stdin and stdout to a TCP connection to
   * {@code 127.0.0.1:port} there ({@code box-agent --pipe}, see {@code box-agent.c}).
   *
   * @param binary where the agent is inside the sandbox, as {@link #SANDBOX_PATH}
   */
  public static List<String> pipeCommand(String binary, int port) {
    return List.of(binary, "--pipe", Integer.toString(port));
  }

  /** The command that runs the agent inside a sandbox, connecting to its mounted socket. */
  public static String[] sandboxCommand() {
    return new String[] {SANDBOX_PATH, SOCKET_DIR + "/" + SOCKET_NAME};
  }

  /**
   * {@link #sandboxCommand()} as the first process of a sandbox: the agent makes {@code home} (mode
   * 0700, as the sandbox user it runs as) and writes "ready" and a newline on its stdout before it
   * connects, which no shell or {@code mkdir} then has to start for.
   */
  public static String[] holderCommand(String home) {
    return new String[] {SANDBOX_PATH, "--home", home, SOCKET_DIR + "/" + SOCKET_NAME};
  }
}
