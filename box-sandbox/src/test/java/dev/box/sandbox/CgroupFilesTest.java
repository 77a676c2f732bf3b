package dev.box.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How long the cgroup files wait for the kernel to empty a cgroup: three seconds of their ticker,
 * in pauses of 5 ms. The pauses advance a fake ticker instead of sleeping, so the waits that give
 * up take no time here.
 */
class CgroupFilesTest {
  @TempDir Path root;

  private final AtomicLong now = new AtomicLong();
  private final List<Long> pauses = new CopyOnWriteArrayList<>();
  private final List<Process> processes = new CopyOnWriteArrayList<>();

  @AfterEach
  void killProcesses() {
    processes.forEach(Process::destroyForcibly);
  }

  private CgroupFiles files(CgroupFiles.Rmdir rmdir) {
    return new CgroupFiles(
        rmdir,
        now::get,
        millis -> {
          pauses.add(millis);
          now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
        });
  }

  private long pausedMillis() {
    return pauses.stream().mapToLong(Long::longValue).sum();
  }

  @Test
  void removeTree_retriesWhileTheKernelTearsDown_untilTheCgroupGoes() throws IOException {
    Path dir = Files.createDirectory(root.resolve("s1"));
    AtomicInteger tries = new AtomicInteger();
    CgroupFiles files =
        files(
            d -> {
              if (tries.incrementAndGet() < 3) {
                throw new IOException("Device or resource busy");
              }
              Files.delete(d);
            });

    assertThat(files.removeTree(dir)).isTrue();

    assertThat(dir).doesNotExist();
    assertThat(pauses).containsExactly(5L, 5L);
  }

  @Test
  void removeTree_givesUpAfterThreeSeconds() throws IOException {
    Path dir = Files.createDirectory(root.resolve("s1"));
    CgroupFiles files =
        files(
            d -> {
              throw new IOException("Device or resource busy");
            });

    assertThat(files.removeTree(dir)).isFalse();

    assertThat(dir).isDirectory();
    assertThat(pausedMillis()).isBetween(3000L, 3005L);
  }

  @Test
  void killAll_killsWhatTheCgroupHolds_andGivesUpAfterThreeSecondsWhenItStaysPopulated()
      throws Exception {
    Path dir = Files.createDirectory(root.resolve("s1"));
    Process process = new ProcessBuilder("sleep", "600").start();
    processes.add(process);
    // A cgroup.procs the kernel never empties: the process stays listed after it is killed.
    FakeCgroupFs.write(dir.resolve("cgroup.procs"), process.pid() + "\n");
    CgroupFiles files = files(Files::deleteIfExists);

    assertThat(files.killAll(dir)).isFalse();

    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(pausedMillis()).isBetween(3000L, 3005L);
  }

  @Test
  void killAll_returnsAtOnceForAnEmptyCgroup() throws IOException {
    Path dir = Files.createDirectory(root.resolve("s1"));
    FakeCgroupFs.write(dir.resolve("cgroup.procs"), "");

    assertThat(files(Files::deleteIfExists).killAll(dir)).isTrue();

    assertThat(pauses).isEmpty();
  }
}
