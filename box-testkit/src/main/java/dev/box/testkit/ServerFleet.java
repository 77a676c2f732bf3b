package dev.box.testkit;

import dev.box.api.internal.FileTrees;
import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.BoxSocket;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The servers one conformance suite starts, in this JVM or in child JVMs, each on a fresh temporary
 * data directory; {@link #close()} stops them all and deletes the directories.
 *
 * <p>Every server requires {@link #TOKEN} (unless the settings configure another token), which
 * {@link #http(int)} and {@link #relay(int, String)} send; a child JVM gets it in its environment,
 * never on its command line, and so it gets an E2B API key.
 */
final class ServerFleet implements AutoCloseable {
  /** The control token of every server a fleet starts, unless its settings name another. */
  static final String TOKEN = newToken();

  private final String backend;
  private final Map<String, String> settings;
  private final List<Path> dataDirs = new CopyOnWriteArrayList<>();
  private final List<BoxServer> servers = new CopyOnWriteArrayList<>();
  private final List<Process> children = new CopyOnWriteArrayList<>();
  private final List<Path> childDataDirs = new CopyOnWriteArrayList<>();

  /**
   * @param backend the {@code backend} setting of every server
   * @param settings further settings of every server, keys of {@link ServerConfig#KEYS}
   * @throws IllegalArgumentException when a key is not a server setting
   */
  ServerFleet(String backend, Map<String, String> settings) {
    for (String key : settings.keySet()) {
      if (!ServerConfig.KEYS.contains(key)) {
        throw new IllegalArgumentException(
            "'" + key + "' is not a server setting; the settings are " + ServerConfig.KEYS);
      }
    }
    this.backend = backend;
    this.settings = Map.copyOf(settings);
  }

  /** A JSON client of a fleet's server on {@code port}, with {@link #TOKEN}. */
  static BoxHttp http(int port) {
    Map<String, String> headers = new HashMap<>(BoxHttp.bearer(TOKEN));
    headers.put("Content-Type", "application/json");
    return new BoxHttp(port, headers);
  }

  /** A client of the relay WebSocket {@code path} of a fleet's server on {@code port}. */
  static BoxSocket relay(int port, String path) {
    return BoxSocket.connect(port, path, BoxHttp.bearer(TOKEN));
  }

  private static String newToken() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /** Every data directory handed out so far, the first one's server first. */
  List<Path> dataDirs() {
    return List.copyOf(dataDirs);
  }

  Path newDataDir() throws IOException {
    Path dir = Files.createTempDirectory("box-testkit-");
    dataDirs.add(dir);
    return dir;
  }

  /** Starts a server in this JVM on {@code dataDir}, with {@code extra} over the settings. */
  BoxServer start(Path dataDir, Map<String, String> extra) {
    BoxServer server = BoxServer.start(ServerConfig.resolve(flags(dataDir, extra), Map.of()));
    servers.add(server);
    return server;
  }

  void stop(BoxServer server) {
    server.close();
    servers.remove(server);
  }

  /**
   * Starts {@link ChildServer} in a JVM of its own on {@code dataDir} and returns once it listens.
   * The child's log goes to {@code log}.
   */
  Child startChild(Path dataDir, Path log) throws Exception {
    return startChild(dataDir, log, List.of(), Map.of());
  }

  /**
   * Starts {@link ChildServer} like {@link #startChild(Path, Path)}, its command line behind {@code
   * launcher} (words such as {@code nsenter --net=...}, or none) and with {@code extra} over the
   * settings. Throws {@link IllegalStateException} when the child exits before it listens; what it
   * said is then in {@code log}.
   */
  Child startChild(Path dataDir, Path log, List<String> launcher, Map<String, String> extra)
      throws Exception {
    List<String> command = new ArrayList<>(launcher);
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ChildServer.class.getName());
    flags(dataDir, extra).entrySet().stream()
        .filter(e -> !e.getKey().equals("control_token") && !e.getKey().equals("e2b_api_key"))
        .forEach(e -> command.add(e.getKey() + "=" + e.getValue()));
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
    builder.environment().put(ChildServer.TOKEN_VARIABLE, childToken());
    String e2bKey = settings.get("e2b_api_key");
    if (e2bKey != null) {
      builder.environment().put(ChildServer.E2B_KEY_VARIABLE, e2bKey);
    }
    Process process = builder.start();
    children.add(process);
    childDataDirs.add(dataDir);
    return new Child(process, readPort(process));
  }

  /** A server in a child JVM: its process (to kill) and its port. */
  record Child(Process process, int port) {}

  /** The token the fleet's child servers require. */
  private String childToken() {
    return settings.getOrDefault("control_token", TOKEN);
  }

  private Map<String, String> flags(Path dataDir, Map<String, String> extra) {
    Map<String, String> flags = new HashMap<>(settings);
    flags.putIfAbsent("control_token", TOKEN);
    flags.put("port", "0");
    flags.put("data_dir", dataDir.toString());
    flags.put("backend", backend);
    flags.putAll(extra);
    return flags;
  }

  private static int readPort(Process child) throws Exception {
    String line = HarnessCommand.firstLine(child, 60);
    if (!line.startsWith("port=")) {
      throw new IllegalStateException("the child server did not start; its first line: " + line);
    }
    return Integer.parseInt(line.substring("port=".length()).strip());
  }

  @Override
  public void close() throws IOException {
    servers.forEach(BoxServer::close);
    for (Process child : children) {
      child.destroyForcibly();
      try {
        child.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    // A server started on a crashed one's data dir removes what the crash left.
    for (Path dir : childDataDirs) {
      try {
        start(dir, Map.of()).close();
      } catch (RuntimeException e) {
        // Nothing more this cleanup can do; the suite's result does not depend on it.
      }
    }
    for (Path dir : dataDirs) {
      FileTrees.deleteTreeQuietly(dir);
    }
  }
}
