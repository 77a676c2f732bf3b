package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.core.backend.CgroupMigrations;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The server holds the favordynmods cgroup hierarchy at {@link CgroupMigrations#HOST_MOUNT} unless
 * told not to, and execs run with it. The mount is the host's (one for every server), so the test
 * removes it first and leaves it in place, as a server does.
 */
class CgroupMovesTest {
  private static final Path POINT = CgroupMigrations.HOST_MOUNT;

  @Test
  void aServer_mountsTheHierarchy_andExecsRun() throws IOException, InterruptedException {
    unmount();
    TestServer box = TestServer.start();
    try {
      assertThat(options()).singleElement().asString().contains("favordynmods");
      assertThat(box.exec("moves", "echo moved").stdout()).isEqualTo("moved\n");
    } finally {
      box.close();
    }
    assertThat(options()).as("left for the next server, as a host setting").hasSize(1);
  }

  @Test
  void cgroupFavordynmodsFalse_mountsNothing() throws IOException, InterruptedException {
    unmount();
    TestServer box = TestServer.start("cgroup_favordynmods", "false");
    try {
      assertThat(options()).isEmpty();
      assertThat(box.exec("plain", "echo plain").stdout()).isEqualTo("plain\n");
    } finally {
      box.close();
    }
  }

  private static void unmount() throws IOException, InterruptedException {
    while (!options().isEmpty()) {
      new ProcessBuilder("umount", POINT.toString()).start().waitFor();
    }
  }

  private static List<String> options() throws IOException {
    return Files.readAllLines(Path.of("/proc/self/mounts")).stream()
        .map(line -> line.split(" "))
        .filter(f -> f[1].equals(POINT.toString()) && f[2].equals("cgroup"))
        .map(f -> f[3])
        .toList();
  }
}
