package dev.box.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keeper of empty process cgroups, on plain directories standing in for cgroups. */
class EmptyCgroupsTest {
  @TempDir Path dir;

  private final EmptyCgroups kept = new EmptyCgroups();

  /** Keeps p1, then p2. */
  private Path keepTwo() throws IOException {
    kept.keep(Files.createDirectory(dir.resolve("p1")));
    Path second = Files.createDirectory(dir.resolve("p2"));
    kept.keep(second);
    return second;
  }

  @Test
  void take_givesTheLastKept_andPassesOverOneRemovedMeanwhile() throws IOException {
    Files.delete(keepTwo());

    assertThat(kept.take()).isEqualTo(dir.resolve("p1"));
    assertThat(kept.take()).isNull();
  }

  @Test
  void takeAll_handsOverEveryKeptCgroup_andKeepsNone() throws IOException {
    keepTwo();

    assertThat(kept.takeAll()).containsExactlyInAnyOrder(dir.resolve("p1"), dir.resolve("p2"));
    assertThat(kept.take()).isNull();
    assertThat(kept.takeAll()).isEmpty();
  }

  @Test
  void provablyEmpty_onlyWhenTheProcessListReadsEmpty() throws IOException {
    Path empty = Files.createDirectory(dir.resolve("empty"));
    Files.writeString(empty.resolve("cgroup.procs"), "\n");
    Path busy = Files.createDirectory(dir.resolve("busy"));
    Files.writeString(busy.resolve("cgroup.procs"), "4242\n");
    Path unreadable = Files.createDirectory(dir.resolve("unreadable"));

    assertThat(EmptyCgroups.provablyEmpty(empty)).isTrue();
    assertThat(EmptyCgroups.provablyEmpty(busy)).isFalse();
    assertThat(EmptyCgroups.provablyEmpty(unreadable)).isFalse();
  }
}
