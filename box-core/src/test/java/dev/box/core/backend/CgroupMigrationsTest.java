package dev.box.core.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real mount, as root on this host's kernel (at a point of the test's own, not the host's
 * {@link CgroupMigrations#HOST_MOUNT}): the hierarchy is mounted with {@code favordynmods}, one
 * mounted already is taken over rather than stacked, and a server told not to mounts nothing.
 */
class CgroupMigrationsTest {
  @TempDir Path dir;

  @Test
  void mountsAFavordynmodsHierarchy_once() throws IOException, InterruptedException {
    assumeTrue("root".equals(System.getProperty("user.name")), "mounting needs root");
    Path point = dir.resolve("a dir/cgroup-dynmods");
    try {
      CgroupMigrations migrations = CgroupMigrations.favorMoves(point, true);
      assumeTrue(migrations.active(), "this kernel has no favordynmods: " + migrations.state());

      assertThat(mountsAt(point)).hasSize(1);
      assertThat(mountsAt(point).get(0).split(" ")[3])
          .contains("favordynmods")
          .contains("name=box-dynmods");
      assertThat(migrations.state()).startsWith("favordynmods (name=box-dynmods at ");

      assertThat(CgroupMigrations.favorMoves(point, true).active()).isTrue();
      assertThat(mountsAt(point)).as("a held mount is taken over, not stacked").hasSize(1);
      assertThat(CgroupMigrations.favorMoves(point, false).state())
          .as("told not to, a server still says what holds the kernel's mode")
          .contains("but held at");
    } finally {
      while (!mountsAt(point).isEmpty()) {
        new ProcessBuilder("umount", point.toString()).start().waitFor();
      }
    }
  }

  @Test
  void disabled_mountsNothing() throws IOException {
    Path point = dir.resolve("cgroup-dynmods");

    CgroupMigrations migrations = CgroupMigrations.favorMoves(point, false);

    assertThat(migrations.active()).isFalse();
    assertThat(migrations.state()).isEqualTo("kernel default (cgroup_favordynmods false)");
    assertThat(mountsAt(point)).isEmpty();
  }

  private static List<String> mountsAt(Path point) throws IOException {
    String escaped = point.toString().replace(" ", "\\040");
    return Files.readAllLines(Path.of("/proc/self/mounts")).stream()
        .filter(line -> line.split(" ")[1].equals(escaped))
        .toList();
  }
}
