package dev.box.sandbox;

import java.util.List;
import java.util.Map;

/**
 * Used where no cgroup can be written (an unprivileged server) or cgroups are turned off: memory is
 * limited per process with the address-space rlimit, pids and cpu are not limited, and this is what
 * the backend reports. A timed-out tree is killed through the launcher's descendants as the host
 * sees them; what double-forked out of reach dies with the sandbox.
 */
public final class NoCgroupDriver implements CgroupDriver {
  @Override
  public Map<String, String> enforced() {
    return Map.of("memory", "rlimit-as", "pids", "none", "cpu", "none", "kill", "process");
  }

  @Override
  public SessionCgroup createSession(String name, int memoryMb, int pidsLimit, double cpus) {
    return new SessionCgroup() {
      @Override
      public ProcessCgroup createProcessGroup(int processMemoryMb) {
        long limitKib = (processMemoryMb > 0 ? processMemoryMb : memoryMb) * 1024L;
        return new ProcessCgroup() {
          @Override
          public long addressSpaceLimitKib() {
            return limitKib;
          }

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
