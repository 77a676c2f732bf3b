package dev.box.server;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A real Box server on 127.0.0.1 with a fresh data directory, and a raw HTTP client for it: the
 * tests speak JSON over a socket as any client would, with the server's control token (the one it
 * generated, unless the settings configure one) unless a test says otherwise.
 */
final class TestServer implements AutoCloseable {
  static final ObjectMapper JSON = BoxHttp.JSON;

  final BoxServer server;
  final Path dataDir;
  private final BoxHttp http;

  private TestServer(BoxServer server, Path dataDir) {
    this.server = server;
    this.dataDir = dataDir;
    this.http = new BoxHttp(server.port(), BoxHttp.bearer(server.controlToken()));
  }

  static TestServer start(String... settings) {
    return start(Clock.systemUTC(), settings);
  }

  /** Starts a server; {@code settings} are flag keys and values, as {@code "max_sessions", "2"}. */
  static TestServer start(Clock clock, String... settings) {
    try {
      return startOn(Files.createTempDirectory("box-test-"), clock, settings);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The settings of a server on the Docker backend of the test machine ({@code DOCKER_SOCKET}),
   * whose sessions run {@code BOX_TEST_IMAGE}.
   */
  static String[] docker() {
    return new String[] {
      "backend",
      "docker",
      "image",
      System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm"),
      "docker_host",
      System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock")
    };
  }

  /**
   * The settings of a server on the Podman backend of the test machine ({@code PODMAN_SOCKET}),
   * whose sessions run {@code BOX_TEST_IMAGE}.
   */
  static String[] podman() {
    return new String[] {
      "backend",
      "podman",
      "image",
      System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm"),
      "podman_host",
      System.getenv().getOrDefault("PODMAN_SOCKET", "/run/podman/podman.sock")
    };
  }

  /** Starts a server on the data dir {@code dataDir}, which an earlier server may have used. */
  static TestServer startOn(Path dataDir, Clock clock, String... settings) {
    Map<String, String> flags = new HashMap<>();
    flags.put("port", "0");
    flags.put("data_dir", dataDir.toString());
    flags.put("backend", "bwrap");
    for (int i = 0; i < settings.length; i += 2) {
      flags.put(settings[i], settings[i + 1]);
    }
    return new TestServer(BoxServer.start(ServerConfig.resolve(flags, Map.of()), clock), dataDir);
  }

  /** The token the server requires, or null when it runs with {@code insecure}. */
  @Nullable String token() {
    return server.controlToken();
  }

  /** The headers every request sends: the server's token unless a test replaced it. */
  Map<String, String> headers() {
    return http.headers();
  }

  /** Sends {@code header} with every later request. */
  TestServer withHeader(String name, String value) {
    http.withHeader(name, value);
    return this;
  }

  /** The client of this server, with the headers every request sends. */
  BoxHttp http() {
    return http;
  }

  Answer get(String path) {
    return http.get(path);
  }

  Answer post(String path, String body) {
    return http.post(path, body);
  }

  Answer delete(String path) {
    return http.delete(path);
  }

  /** Runs {@code cmd} in {@code session} with the extra JSON fields in {@code more}. */
  Answer exec(String session, String cmd, String more) {
    return http.exec(session, cmd, more);
  }

  Answer exec(String session, String cmd) {
    return http.exec(session, cmd);
  }

  /** Runs {@link #exec(String, String, String)} on another thread, for a command released later. */
  CompletableFuture<Answer> execAsync(String session, String cmd, String more) {
    return CompletableFuture.supplyAsync(() -> exec(session, cmd, more));
  }

  /**
   * Starts an exec in {@code session}, with the extra JSON fields in {@code more}, that runs until
   * the file {@code release} exists in the sandbox; returns once the command is running.
   */
  CompletableFuture<Answer> execUntilReleased(String session, String release, String more) {
    CompletableFuture<Answer> running =
        execAsync(
            session,
            "touch /tmp/started; while [ ! -f " + release + " ]; do sleep 0.05; done",
            more);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> exec(session, "test -f /tmp/started").body().path("ok").asBoolean());
    return running;
  }

  Answer send(String method, String path, String body) {
    return http.send(method, path, body);
  }

  /** Sends a request with {@code requestHeaders} only: no control token unless they hold one. */
  Answer send(String method, String path, String body, Map<String, String> requestHeaders) {
    return http.send(method, path, body, requestHeaders);
  }

  @Override
  public void close() {
    server.close();
  }
}
