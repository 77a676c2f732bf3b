package dev.box.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.testclient.HostProcesses;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@code ./box} launcher's AOT cache (its archive), as a person starts and stops the server:
 * {@code ./box serve} ended by a signal to its whole process group (what Ctrl-C in a terminal or
 * {@code kill -- -PGID} does) still leaves the archive for the next start, which then uses it, and
 * leaves no half-written {@code .tmp} behind; a leftover of a server that is gone, or of one killed
 * while it wrote its archive, is swept at the next start, and a later clean stop writes the
 * archive. Runs the real launcher on the real jar (built by box-cli before this module's tests).
 */
class LauncherArchiveTest {
  private static final Duration PATIENCE = Duration.ofSeconds(90);

  private final Path repo =
      Objects.requireNonNull(Path.of("").toAbsolutePath().getParent(), "the module's parent");
  private final HttpClient http = HttpClient.newHttpClient();

  @TempDir Path cache;
  @TempDir Path data;

  private Process server;

  @AfterEach
  void stopServer() {
    if (server != null && server.isAlive()) {
      signalGroup(server.pid(), "KILL");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"INT", "TERM"})
  void aServerEndedThroughItsProcessGroup_keepsItsArchive_andTheNextStartUsesIt(String signal)
      throws Exception {
    Path stale = cache.resolve("box-serve-1-2.aot." + deadPid() + ".tmp");
    Files.writeString(stale, "half an archive");
    // A live process that is not the JVM writing it: the pid of a gone server, reused.
    Path reused = cache.resolve("box-serve-1-2.aot." + ProcessHandle.current().pid() + ".tmp");
    Files.writeString(reused, "half an archive");
    Path earlier = cache.resolve("box-serve-1-2.jsa");
    Files.writeString(earlier, "an earlier launcher's class-data archive");
    // The cache of an earlier build of the same jar: the launcher names it after the jar's path.
    Path earlierBuild =
        cache.resolve("box-serve-" + cksum(repo.resolve("box-cli/target/box.jar")) + "-1.aot");
    Files.writeString(earlierBuild, "an earlier build's AOT cache");
    Path otherJar = cache.resolve("box-serve-1-1.aot");
    Files.writeString(otherJar, "another jar's AOT cache");

    server = start();
    assertThat(HostProcesses.commandLine(server.pid()))
        .noneMatch(a -> a.startsWith("-XX:AOTCache="));
    assertThat(stale).doesNotExist();
    assertThat(reused).doesNotExist();
    assertThat(earlier).doesNotExist();
    signalGroup(server.pid(), signal);
    assertThat(server.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    await().atMost(PATIENCE).untilAsserted(() -> assertThat(leftovers()).isEmpty());
    // The cache kept, and the other jar's.
    assertThat(archives()).hasSize(2);
    assertThat(earlierBuild).doesNotExist();
    assertThat(otherJar).exists();
    Files.delete(otherJar);

    server = start();
    assertThat(HostProcesses.commandLine(server.pid()))
        .contains("-XX:AOTCache=" + archives().get(0));
    signalGroup(server.pid(), "TERM");
    assertThat(server.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(archives()).hasSize(1);
    assertThat(leftovers()).isEmpty();
  }

  @Test
  void aServerKilledWhileWritingItsArchive_leavesNoTmpAfterTheNextStart_andACleanStopKeepsOne()
      throws Exception {
    server = start();
    signalGroup(server.pid(), "INT");
    // Impatient: a second stop, SIGKILL to the group, once the JVM has begun writing its archive
    // (or, on a fast machine, once the launcher has kept it).
    await()
        .atMost(PATIENCE)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> !list("*.tmp").isEmpty() || !archives().isEmpty());
    signalGroup(server.pid(), "KILL");
    assertThat(server.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();

    server = start();
    // Only the new server's own record, if its JVM has opened it yet.
    String own = ".aot." + server.pid() + ".";
    assertThat(list("*.tmp")).allMatch(f -> f.getFileName().toString().contains(own));
    signalGroup(server.pid(), "TERM");
    assertThat(server.waitFor(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    await().atMost(PATIENCE).untilAsserted(() -> assertThat(archives()).hasSize(1));
    await().atMost(PATIENCE).untilAsserted(() -> assertThat(leftovers()).isEmpty());
  }

  /**
   * Starts {@code ./box serve} as the leader of a process group of its own, SIGINT handled as in a
   * terminal's foreground job (a JVM that inherits it ignored, as from a build started in the
   * background, would not stop on it); waits for /readyz.
   */
  private Process start() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    ProcessBuilder builder =
        new ProcessBuilder(
                "setsid",
                "env",
                "--default-signal=INT",
                repo.resolve("box").toString(),
                "serve",
                "--port=" + port,
                "--data-dir=" + data,
                "--backend=bwrap")
            .redirectErrorStream(true)
            .redirectOutput(data.resolve("serve-" + port + ".log").toFile());
    builder.environment().put("BOX_JAVA_CACHE", cache.toString());
    builder.environment().put("BOX_JAVA_CACHE_AFTER", "0");
    builder.environment().remove("BOX_JAVA_OPTS");
    Process process = builder.start();
    URI ready = URI.create("http://127.0.0.1:" + port + "/readyz");
    await()
        .atMost(PATIENCE)
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptions()
        .until(
            () ->
                http.send(
                            HttpRequest.newBuilder(ready).build(),
                            HttpResponse.BodyHandlers.discarding())
                        .statusCode()
                    == 200);
    return process;
  }

  /** What {@code printf '%s\n' PATH | cksum} prints first, as the launcher names caches. */
  private static String cksum(Path path) throws IOException, InterruptedException {
    Process cksum = new ProcessBuilder("cksum").redirectErrorStream(true).start();
    try (OutputStream in = cksum.getOutputStream()) {
      in.write((path + "\n").getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(cksum.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(cksum.waitFor()).isZero();
    return out.split(" ", 2)[0];
  }

  private List<Path> archives() throws IOException {
    return list("box-serve-*.aot");
  }

  /**
   * Archives being written, and the launcher's jobs still waiting to keep one (they carry the
   * launcher's command line, which names the data dir).
   */
  private List<String> leftovers() throws IOException {
    List<String> found = new ArrayList<>();
    list("*.tmp").forEach(f -> found.add(f.toString()));
    ProcessHandle.allProcesses()
        .filter(h -> HostProcesses.commandLine(h.pid()).contains("--data-dir=" + data))
        .forEach(h -> found.add("pid " + h.pid() + " " + HostProcesses.commandLine(h.pid())));
    return found;
  }

  private List<Path> list(String glob) throws IOException {
    PathMatcher matcher = cache.getFileSystem().getPathMatcher("glob:" + glob);
    try (Stream<Path> files = Files.list(cache)) {
      return files.filter(f -> matcher.matches(f.getFileName())).sorted().toList();
    }
  }

  private static void signalGroup(long leader, String signal) {
    try {
      new ProcessBuilder("kill", "-" + signal, "--", "-" + leader).inheritIO().start().waitFor();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static long deadPid() throws Exception {
    Process done = new ProcessBuilder("true").start();
    done.waitFor();
    return done.pid();
  }
}
