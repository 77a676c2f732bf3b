package dev.box.core.agent;

import dev.box.core.Hashes;
import java.nio.file.Path;

/**
 * Where the sockets of a server's exec agents live on the host. A Unix socket's path has at most
 * 107 bytes, and a data directory or a session id may be long: so each sandbox's socket directory
 * is named by hashes ({@code <instance>-<sandbox>}, 8 hex digits each), under {@code <state
 * dir>/agents} when that path is short enough, else under {@code /run/box-agents/<hash of the state
 * dir>}.
 */
public final class AgentSockets {
  /** The longest socket path this class hands out, with room to spare below the kernel's 107. */
  private static final int MAX_PATH = 100;

  private static final Path RUN = Path.of("/run/box-agents");

  private AgentSockets() {}

  /** The directory of the agents' socket directories for {@code stateDir}. */
  public static Path root(Path stateDir) {
    Path own = stateDir.toAbsolutePath().normalize().resolve("agents");
    String longest = own.resolve("00000000-00000000").resolve("socket").toString();
    if (longest.length() <= MAX_PATH) {
      return own;
    }
    return RUN.resolve(Hashes.shortSha256(stateDir.toAbsolutePath().normalize().toString()));
  }

  /**
   * The name of the socket directory of sandbox {@code name} of server instance {@code instance}.
   */
  public static String dirName(String instance, String name) {
    return instancePrefix(instance) + hash(name);
  }

  /** What the socket directories of instance {@code instance} start with. */
  public static String instancePrefix(String instance) {
    return hash(instance) + "-";
  }

  private static String hash(String value) {
    return Hashes.shortSha256(value);
  }
}
