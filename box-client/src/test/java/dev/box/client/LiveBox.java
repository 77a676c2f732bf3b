package dev.box.client;

import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSpec;
import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * A real Box server in this JVM (real bubblewrap sandboxes, a real socket on loopback) with a fresh
 * data directory, and a client connected to it directly with the control token the server generated
 * there, read from the data directory as {@code box exec} reads it.
 */
public final class LiveBox implements AutoCloseable {
  private final BoxServer server;
  private final Path dataDir;
  private final BoxClient client;

  private LiveBox(BoxServer server, Path dataDir) {
    this.server = server;
    this.dataDir = dataDir;
    this.client = builder(uri()).build();
  }

  /** Starts a server; {@code settings} are flag keys and values, as {@code "max_sessions", "2"}. */
  public static LiveBox start(String... settings) {
    try {
      Path dataDir = Files.createTempDirectory("box-client-test-");
      Map<String, String> flags =
          new HashMap<>(Map.of("port", "0", "data_dir", dataDir.toString(), "backend", "bwrap"));
      for (int i = 0; i < settings.length; i += 2) {
        flags.put(settings[i], settings[i + 1]);
      }
      return new LiveBox(BoxServer.start(ServerConfig.resolve(flags, Map.of())), dataDir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The server's address. */
  public URI uri() {
    return URI.create("http://127.0.0.1:" + server.port());
  }

  /** The server's port. */
  public int port() {
    return server.port();
  }

  /** The server's data directory, which holds its control-token file. */
  public Path dataDir() {
    return dataDir;
  }

  /** The token the server requires. */
  public String token() {
    return Objects.requireNonNull(server.controlToken(), "the server runs with a token");
  }

  /**
   * A builder of a client of {@code uri} (the server, or a proxy to it) with the server's token.
   */
  public BoxClient.Builder builder(URI uri) {
    return BoxClient.builder(uri).controlTokenFrom(dataDir);
  }

  /** A client connected to the server directly. */
  public BoxClient client() {
    return client;
  }

  /** Creates the session {@code sessionId} with the defaults and starts {@code spec} in it. */
  public BoxManagedProcessInfo startInNewSession(String sessionId, BoxManagedProcessSpec spec) {
    client.createSession(BoxSpec.builder(sessionId).build());
    return client.startProcess(sessionId, spec);
  }

  /** Stops the server and deletes its data directory. */
  @Override
  public void close() {
    client.close();
    server.close();
    deleteTree(dataDir);
  }

  /** Deletes {@code dir} and everything in it, as far as it can: it is a temporary directory. */
  public static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // Best effort: a temporary directory.
    }
  }
}
