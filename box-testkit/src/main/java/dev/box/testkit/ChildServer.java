package dev.box.testkit;

import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * A Box server in a JVM of its own, so that the conformance suite can crash it for real (SIGKILL)
 * and check that the next server on the same data directory removes what it left behind.
 *
 * <p>Arguments are {@code key=value} server settings; the control token, kept off the command line,
 * comes from the variable {@value #TOKEN_VARIABLE} when it is set (an E2B API key from {@value
 * #E2B_KEY_VARIABLE}) (else the server generates one in its data directory). It prints {@code
 * port=<port>} on stdout once it accepts requests, and shuts down cleanly when its stdin ends (so a
 * test JVM that dies first does not leave it running).
 */
public final class ChildServer {
  /** The environment variable that carries the control token. */
  public static final String TOKEN_VARIABLE = "BOX_CONTROL_TOKEN";

  /** The environment variable that carries an E2B API key, also kept off the command line. */
  public static final String E2B_KEY_VARIABLE = "E2B_API_KEY";

  private ChildServer() {}

  /** Runs the server until stdin ends. */
  public static void main(String[] args) throws IOException {
    Map<String, String> flags = new HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("expected key=value, got " + arg);
      }
      flags.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    String token = System.getenv(TOKEN_VARIABLE);
    Map<String, String> env = new HashMap<>();
    if (token != null) {
      env.put(TOKEN_VARIABLE, token);
    }
    String e2bKey = System.getenv(E2B_KEY_VARIABLE);
    if (e2bKey != null) {
      env.put(E2B_KEY_VARIABLE, e2bKey);
    }
    try (BoxServer server = BoxServer.start(ServerConfig.resolve(flags, env))) {
      System.out.println("port=" + server.port());
      System.out.flush();
      while (System.in.read() >= 0) {
        // Wait for the end of stdin.
      }
    }
  }
}
