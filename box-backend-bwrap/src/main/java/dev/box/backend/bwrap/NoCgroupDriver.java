package dev.box.backend.bwrap;

import java.util.List;
import java.util.Map;

/**
 * Used where no cgroup can be written (an unprivileged server): no limit is enforced and this is
 * what the backend reports; a process tree is killed through the sandbox's pid namespace only when
 * the whole sandbox ends.
 */
final class NoCgroupDriver implements CgroupDriver {
  @Override
  public Map<String, String> enforced() {
    return Map.of("memory", "none", "pids", "none", "cpu", "none", "kill", "process");
  }

  @Override
  public SessionCgroup createSession(String name, int memoryMb, int pidsLimit, double cpus) {
    return new SessionCgroup() {
      @Override
      public ProcessCgroup createProcessGroup(int memoryMb) {
        return new ProcessCgroup() {
          @Override
          public List<java.nio.file.Path> procsFiles() {
            return List.of();
          }

          @Override
          public void kill() {}

          @Override
          public void terminate(long launcherPid) {}

          @Override
          public void releaseIfEmpty() {}
        };
      }

      @Override
      public void destroy() {}
    };
  }

  @Override
  public void removeOthers(String prefix) {}

  @Override
  public void close() {}
}
