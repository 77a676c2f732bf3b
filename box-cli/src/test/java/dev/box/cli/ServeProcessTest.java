package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxSpec;
import dev.box.client.BoxClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code box serve} as its own process, stopped the way an operator or a crash stops it: nothing it
 * started may outlive it, and what a crash leaves behind is removed by the next start.
 */
class ServeProcessTest {
  private static final Pattern LISTENING =
      Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");

  @TempDir Path dataDir;

  @Test
  void sigterm_stopsEverySandboxAndRemovesItsCgroups() throws Exception {
    String marker = "box-sigterm-" + UUID.randomUUID();
    Server server = Server.start(dataDir);
    try (BoxClient client = BoxClient.connect(server.uri())) {
      client.exec(background("one", marker));
      client.exec(background("two", marker));
      assertThat(hostProcessesContaining(marker)).hasSize(2);
      assertThat(hostProcessesContaining(dataDir.toString())).isNotEmpty();
    }

    server.process.destroy(); // SIGTERM

    assertThat(server.process.waitFor()).isIn(0, 143);
    assertThat(hostProcessesContaining(marker)).isEmpty();
    assertThat(hostProcessesContaining(dataDir.toString())).isEmpty();
    assertThat(cgroupBase(dataDir)).doesNotExist();
    assertThat(Files.list(dataDir.resolve("workspaces"))).isEmpty();
  }

  @Test
  void afterAServerIsKilled_itsSandboxesDie_andTheNextServerRemovesWhatWasLeft() throws Exception {
    String marker = "box-sigkill-" + UUID.randomUUID();
    Server first = Server.start(dataDir);
    try (BoxClient client = BoxClient.connect(first.uri())) {
      client.exec(background("crash", marker));
    }
    assertThat(hostProcessesContaining(marker)).hasSize(1);

    first.process.destroyForcibly(); // SIGKILL: no shutdown hook runs
    first.process.waitFor();

    // --die-with-parent ends the sandboxes with the server ...
    await().atMost(Duration.ofSeconds(10)).until(() -> hostProcessesContaining(marker).isEmpty());
    // ... but its workspace and cgroups stay until the next server of this data dir starts.
    assertThat(names(dataDir.resolve("workspaces"))).hasSize(1);
    assertThat(names(cgroupBase(dataDir))).hasSize(1);

    Server second = Server.start(dataDir);
    try {
      assertThat(names(dataDir.resolve("workspaces"))).isEmpty();
      assertThat(names(cgroupBase(dataDir))).isEmpty();
    } finally {
      second.process.destroy();
      second.process.waitFor();
    }
  }

  private static BoxSpec background(String session, String marker) {
    return BoxSpec.builder(session)
        .cmd("nohup sh -c 'sleep 1000; echo " + marker + "' >/dev/null 2>&1 &")
        .build();
  }

  /** A {@code box serve} child process on a free port. */
  private record Server(Process process, int port) {
    static Server start(Path dataDir) throws IOException {
      String java = ProcessHandle.current().info().command().orElseThrow();
      Process process =
          new ProcessBuilder(
                  java,
                  "-cp",
                  System.getProperty("java.class.path"),
                  "dev.box.cli.BoxCli",
                  "serve",
                  "--backend",
                  "bwrap",
                  "--port",
                  "0",
                  "--data-dir",
                  dataDir.toString())
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      BufferedReader log =
          new BufferedReader(
              new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = log.readLine()) != null) {
        Matcher m = LISTENING.matcher(line);
        if (m.find()) {
          Thread.ofPlatform().daemon().start(() -> drain(log));
          return new Server(process, Integer.parseInt(m.group(1)));
        }
      }
      throw new IllegalStateException("box serve exited before listening");
    }

    URI uri() {
      return URI.create("http://127.0.0.1:" + port);
    }
  }

  private static void drain(BufferedReader log) {
    try {
      while (log.readLine() != null) {
        // Keep the server's stderr flowing.
      }
    } catch (IOException e) {
      // The server is gone.
    }
  }

  /** The pids of host processes whose command line contains {@code text}. */
  static List<String> hostProcessesContaining(String text) throws IOException {
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      List<String> found = new java.util.ArrayList<>();
      for (Path proc : procs) {
        try {
          String cmdline =
              new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8);
          if (cmdline.contains(text)) {
            found.add(proc.getFileName().toString());
          }
        } catch (IOException e) {
          // Ended while we looked.
        }
      }
      return found;
    }
  }

  /** The pids cgroup under which the server of {@code dataDir} creates its sandboxes' cgroups. */
  private static Path cgroupBase(Path dataDir) throws Exception {
    byte[] digest =
        MessageDigest.getInstance("SHA-256")
            .digest(
                dataDir.toAbsolutePath().normalize().toString().getBytes(StandardCharsets.UTF_8));
    return Path.of("/sys/fs/cgroup/pids", "box-" + HexFormat.of().formatHex(digest, 0, 4));
  }

  private static List<String> names(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.filter(Files::isDirectory).map(p -> p.getFileName().toString()).toList();
    }
  }
}
