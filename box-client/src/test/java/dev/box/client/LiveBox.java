package dev.box.client;

import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSpec;
import dev.box.api.internal.FileTrees;
import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Box server in this JVM (real bubblewrap sandboxes, a real socket on loopback) with a fresh
 * data directory, and a client connected to it directly with the control token the server generated
 * there, read from the data directory as {@code box exec} reads it.
 *
 * <p>It serves the tests of one class: register it as a static field with {@code
 * RegisterExtension}; it starts before the first test and stops after the last, deleting its data
 * directory.
 */
public final class LiveBox implements BeforeAllCallback, AfterAllCallback {
  private final String[] settings;
  private volatile @Nullable Running running;

  /** What a started server holds. */
  private record Running(BoxServer server, Path dataDir, BoxClient client) {}

  private LiveBox(String[] settings) {
    this.settings = settings.clone();
  }

  /**
   * A server for the tests of a class; {@code settings} are flag keys and values, as {@code
   * "max_sessions", "2"}.
   */
  public static LiveBox perClass(String... settings) {
    return new LiveBox(settings);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    try {
      Path dataDir = Files.createTempDirectory("box-client-test-");
      Map<String, String> flags =
          new HashMap<>(Map.of("port", "0", "data_dir", dataDir.toString(), "backend", "bwrap"));
      for (int i = 0; i < settings.length; i += 2) {
        flags.put(settings[i], settings[i + 1]);
      }
      BoxServer server = BoxServer.start(ServerConfig.resolve(flags, Map.of()));
      BoxClient client =
          BoxClient.builder(URI.create("http://127.0.0.1:" + server.port()))
              .controlTokenFrom(dataDir)
              .build();
      running = new Running(server, dataDir, client);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stops the server and deletes its data directory. */
  @Override
  public void afterAll(ExtensionContext context) {
    Running stopped = running;
    running = null;
    if (stopped != null) {
      stopped.client().close();
      stopped.server().close();
      FileTrees.deleteTreeQuietly(stopped.dataDir());
    }
  }

  private Running running() {
    return Objects.requireNonNull(running, "the server runs from before the first test");
  }

  /** The server's address. */
  public URI uri() {
    return URI.create("http://127.0.0.1:" + port());
  }

  /** The server's port. */
  public int port() {
    return running().server().port();
  }

  /** The server's data directory, which holds its control-token file. */
  public Path dataDir() {
    return running().dataDir();
  }

  /** The token the server requires. */
  public String token() {
    return Objects.requireNonNull(
        running().server().controlToken(), "the server runs with a token");
  }

  /**
   * A builder of a client of {@code uri} (the server, or a proxy to it) with the server's token.
   */
  public BoxClient.Builder builder(URI uri) {
    return BoxClient.builder(uri).controlTokenFrom(dataDir());
  }

  /** A client connected to the server directly. */
  public BoxClient client() {
    return running().client();
  }

  /** Creates the session {@code sessionId} with the defaults and starts {@code spec} in it. */
  public BoxManagedProcessInfo startInNewSession(String sessionId, BoxManagedProcessSpec spec) {
    client().createSession(BoxSpec.builder(sessionId).build());
    return client().startProcess(sessionId, spec);
  }
}
