package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A start that fails halfway releases what it had: a backend that cannot be opened fails the start
 * with its reason, and a start refused after the backend opened closes it, with the sandboxes its
 * pool started, and releases the data dir.
 */
class ServerStartTest {
  @TempDir Path dataDir;

  private ServerConfig config(String backend) {
    return ServerConfig.resolve(
        Map.of("port", "0", "data_dir", dataDir.toString(), "backend", backend), Map.of());
  }

  @Test
  void anUnknownBackend_failsTheStartWithItsName_andTheDataDirCanBeTakenAgain() {
    assertThatThrownBy(() -> BoxServer.start(config("nope")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown backend 'nope'");

    try (BoxServer server = BoxServer.start(config("bwrap"))) {
      assertThat(server.port()).isPositive();
    }
  }

  @Test
  void aStartRefusedAfterTheBackendOpened_closesIt_andLeavesNoSandbox() throws IOException {
    // Stdio control without a trusted instance is refused after the backend opened, and
    // bubblewrap's pool starts sandboxes as soon as it is open.
    assertThatThrownBy(() -> BoxServer.start(config("bwrap"), Clock.systemUTC(), Map.of(), true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("LANGBOT_BOX_TRUSTED_INSTANCE_UUID");

    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .until(() -> processesNaming(dataDir).isEmpty());
    try (BoxServer server = BoxServer.start(config("bwrap"))) {
      assertThat(server.port()).isPositive();
    }
  }

  /** The pids of host processes whose command line names {@code dir}. */
  private static List<String> processesNaming(Path dir) throws IOException {
    List<String> found = new ArrayList<>();
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path proc : procs) {
        try {
          String cmdline =
              new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8);
          if (cmdline.contains(dir.toString())) {
            found.add(proc.getFileName().toString());
          }
        } catch (IOException e) {
          // Ended while we looked.
        }
      }
    }
    return found;
  }
}
