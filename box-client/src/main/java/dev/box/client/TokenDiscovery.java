package dev.box.client;

import dev.box.api.BoxDataDir;
import java.io.IOException;
import java.net.URI;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Where a client finds its control token, as the {@code box} command finds it: the environment,
 * then a data directory's control-token file. The token itself is checked by {@link
 * BoxClient.Builder#controlToken}.
 */
final class TokenDiscovery {
  private TokenDiscovery() {}

  /**
   * The token held in {@code dataDir}'s control-token file ({@link BoxDataDir#TOKEN_FILE}).
   *
   * @throws IllegalArgumentException when the file does not exist, cannot be read or holds no
   *     token; the message names the file, never its content
   */
  static String fromDataDir(Path dataDir) {
    Path file = BoxDataDir.tokenFile(dataDir);
    try {
      return BoxDataDir.readToken(file);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(
          "no control token file " + file + ": is " + dataDir + " the server's data dir?", e);
    } catch (AccessDeniedException e) {
      throw new IllegalArgumentException(
          "cannot read the control token file "
              + file
              + ": permission denied (only the server's user may read it; give the token"
              + " another way)",
          e);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read the control token: " + e.getMessage(), e);
    }
  }

  /**
   * The token for the server at {@code baseUri}, in this order: {@code BOX_CONTROL_TOKEN}; else the
   * control-token file of the data directory {@code BOX_DATA_DIR}; else, only when the server is on
   * loopback, that of the default data directory. A file that does not exist is skipped.
   *
   * @return the token, or null when none is found
   * @throws IllegalArgumentException when a file exists but cannot be read or holds no token
   */
  static @Nullable String discover(Map<String, String> env, URI baseUri) {
    String token = env.get("BOX_CONTROL_TOKEN");
    if (token != null && !token.isBlank()) {
      return token;
    }
    String dataDir = env.get("BOX_DATA_DIR");
    Path dir =
        dataDir != null && !dataDir.isBlank()
            ? Path.of(dataDir.strip())
            : isLoopback(baseUri) ? BoxDataDir.defaultPath() : null;
    if (dir != null && Files.exists(BoxDataDir.tokenFile(dir))) {
      return fromDataDir(dir);
    }
    return null;
  }

  /** Whether {@code uri} names this machine by a loopback name or address, resolving nothing. */
  static boolean isLoopback(URI uri) {
    String host = String.valueOf(uri.getHost()).toLowerCase(Locale.ROOT);
    return host.equals("localhost")
        || host.endsWith(".localhost")
        || host.equals("[::1]")
        || host.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
  }
}
