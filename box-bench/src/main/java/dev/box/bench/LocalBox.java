package dev.box.bench;

import dev.box.api.BoxDataDir;
import dev.box.api.internal.FileTrees;
import dev.box.core.settings.RuntimeLimits;
import dev.box.server.BoxServer;
import dev.box.server.IsolationConfig;
import dev.box.server.ServerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Box server in this JVM on a free loopback port with a temporary data directory, and the client
 * that talks to it. {@link #close()} deletes every session the client created, stops the server and
 * removes the data directory; it may be called more than once and from a shutdown hook.
 */
final class LocalBox implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LocalBox.class);

  private final BoxServer server;
  private final BenchClient client;
  private final Path dataDir;
  private final AtomicBoolean closed = new AtomicBoolean();

  private LocalBox(BoxServer server, Path dataDir) {
    this.server = server;
    this.client = new BenchClient(server.port(), server.controlToken());
    this.dataDir = dataDir;
  }

  /** Starts a server that never reaps idle sessions and holds up to {@code maxSessions}. */
  static LocalBox start(int maxSessions) throws IOException {
    return start(maxSessions, Map.of("backend", "bwrap"));
  }

  /**
   * Starts a server that never reaps idle sessions, holds up to {@code maxSessions}, with the
   * further {@code settings} (for example {@code backend} and {@code image}).
   */
  static LocalBox start(int maxSessions, Map<String, String> settings) throws IOException {
    Path dataDir = Files.createTempDirectory("box-bench-");
    Map<String, String> flags = new HashMap<>(settings);
    flags.put("host", "127.0.0.1");
    flags.put("port", "0");
    flags.put("data_dir", dataDir.toString());
    flags.put(RuntimeLimits.SESSION_TTL_SEC.key(), "0");
    flags.put(RuntimeLimits.MAX_SESSIONS.key(), Integer.toString(maxSessions));
    try {
      // No environment: a BOX_* variable of the caller must not change what is measured.
      return new LocalBox(BoxServer.start(ServerConfig.resolve(flags, Map.of())), dataDir);
    } catch (RuntimeException e) {
      removeTree(dataDir);
      throw e;
    }
  }

  BenchClient client() {
    return client;
  }

  /** The server's state directory, which holds the workspaces and snapshots. */
  Path stateDir() {
    return BoxDataDir.stateDir(dataDir);
  }

  /**
   * A workspace directory under the data directory, where LangBot keeps its Workspaces' (its
   * default {@code host_root}), owned by the sandbox user as LangBot's are.
   */
  Path langBotWorkspace() throws IOException {
    Path workspace = Files.createDirectories(dataDir.resolve("tenants").resolve("bench"));
    Files.setAttribute(workspace, "unix:uid", IsolationConfig.DEFAULT_SANDBOX_UID);
    Files.setAttribute(workspace, "unix:gid", IsolationConfig.DEFAULT_SANDBOX_UID);
    return workspace.toRealPath();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      List<String> failures = client.deleteAll();
      failures.forEach(f -> log.warn("could not delete a session: {}", f));
    } finally {
      server.close();
      removeTree(dataDir);
    }
  }

  private static void removeTree(Path root) {
    try {
      FileTrees.deleteTree(root);
    } catch (IOException e) {
      log.warn("could not remove {}: {}", root, e.toString());
    }
  }
}
