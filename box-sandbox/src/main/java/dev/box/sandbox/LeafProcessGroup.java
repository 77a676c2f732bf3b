package dev.box.sandbox;

import dev.box.sandbox.CgroupDriver.ProcessCgroup;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A process's own cgroup under its session's, as both cgroup versions make one: {@code dir} is the
 * leaf whose processes are signalled, {@code memory} the leaf that limits its memory where that is
 * another directory (v1's memory hierarchy), and {@code killer} empties the leaf the way the
 * version can (v2's {@code cgroup.kill}, v1's signals).
 */
record LeafProcessGroup(
    Path dir, @Nullable Path memory, List<Path> procsFiles, CgroupFiles files, Runnable killer)
    implements ProcessCgroup {
  LeafProcessGroup {
    procsFiles = List.copyOf(procsFiles);
  }

  @Override
  public void kill() {
    killer.run();
  }

  @Override
  public void terminate(long launcherPid) {
    CgroupFiles.terminateAll(dir, launcherPid);
  }

  @Override
  public void releaseIfEmpty() {
    files.releaseIfEmpty(dir, memory);
  }
}
