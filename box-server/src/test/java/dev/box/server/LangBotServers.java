package dev.box.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/**
 * Box servers as LangBot runs them, for the tests of its control channel: port 0, a fresh data
 * directory, Box's settings and LangBot's environment; and who the tests' LangBot is.
 */
final class LangBotServers {
  /** The control token LangBot and the server share. */
  static final String TOKEN = "langbot-shared-secret-0123456789abcdef";

  /** The LangBot instance the server trusts. */
  static final String INSTANCE = "instance-1";

  /** LangBot's environment: the shared token, and {@link #INSTANCE} trusted. */
  static final Map<String, String> ENV =
      Map.of("LANGBOT_BOX_CONTROL_TOKEN", TOKEN, "LANGBOT_BOX_TRUSTED_INSTANCE_UUID", INSTANCE);

  private LangBotServers() {}

  /**
   * A server on a fresh data dir with Box {@code settings} and LangBot's {@code env}, with
   * LangBot's control over stdio when {@code stdio}.
   */
  static BoxServer start(Map<String, String> settings, Map<String, String> env, boolean stdio)
      throws IOException {
    return start(Files.createTempDirectory("box-langbot-"), settings, env, stdio);
  }

  /** As {@link #start(Map, Map, boolean)}, on the data dir {@code dataDir}. */
  static BoxServer start(
      Path dataDir, Map<String, String> settings, Map<String, String> env, boolean stdio) {
    Map<String, String> flags = new HashMap<>(settings);
    flags.put("port", "0");
    flags.put("data_dir", dataDir.toString());
    return BoxServer.start(ServerConfig.resolve(flags, Map.of()), Clock.systemUTC(), env, stdio);
  }

  /** The context of an action of {@link #INSTANCE} in {@code workspace} at placement generation. */
  static String context(String workspace, int generation) {
    return "{\"instance_uuid\": \""
        + INSTANCE
        + "\", \"workspace_uuid\": \""
        + workspace
        + "\", \"placement_generation\": "
        + generation
        + "}";
  }
}
