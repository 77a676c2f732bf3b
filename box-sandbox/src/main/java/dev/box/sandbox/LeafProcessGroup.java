package dev.box.sandbox;

import dev.box.sandbox.CgroupDriver.ProcessCgroup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A process's own cgroup under its session's, as both cgroup versions make one: {@code dir} is the
 * leaf whose processes are signalled, {@code memory} the leaf that limits its memory where that is
 * another directory (v1's memory hierarchy), and {@code killer} empties the leaf the way the
 * version can (v2's {@code cgroup.kill}, v1's signals).
 *
 * <p>A released group is done with: where {@code reuse} is given, an empty leaf is handed to it
 * instead of being removed (its memory leaf is removed still), for the session's next process. A
 * kill or a terminate after the release does nothing, and one under way finishes before the leaf is
 * handed on, so no signal meant for this group reaches the next one's processes.
 */
final class LeafProcessGroup implements ProcessCgroup {
  private final Path dir;
  private final @Nullable Path memory;
  private final List<Path> procsFiles;
  private final CgroupFiles files;
  private final Runnable killer;
  private final @Nullable Consumer<Path> reuse;
  private boolean released;

  LeafProcessGroup(
      Path dir,
      @Nullable Path memory,
      List<Path> procsFiles,
      CgroupFiles files,
      Runnable killer,
      @Nullable Consumer<Path> reuse) {
    this.dir = dir;
    this.memory = memory;
    this.procsFiles = List.copyOf(procsFiles);
    this.files = files;
    this.killer = killer;
    this.reuse = reuse;
  }

  @Override
  public List<Path> procsFiles() {
    return procsFiles;
  }

  @Override
  public synchronized void kill() {
    if (!released) {
      killer.run();
    }
  }

  @Override
  public synchronized void terminate(long launcherPid) {
    if (!released) {
      CgroupFiles.terminateAll(dir, launcherPid);
    }
  }

  @Override
  public synchronized void releaseIfEmpty() {
    if (released) {
      return;
    }
    if (reuse == null) {
      files.releaseIfEmpty(dir, memory);
      return;
    }
    if (!EmptyCgroups.provablyEmpty(dir)) {
      return;
    }
    if (memory != null) {
      try {
        files.removeDir(memory);
      } catch (IOException e) {
        return; // Teardown is not finished: the sandbox removes both.
      }
    }
    released = true;
    reuse.accept(dir);
  }
}
