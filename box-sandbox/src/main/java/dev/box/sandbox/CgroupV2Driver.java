package dev.box.sandbox;

import dev.box.core.backend.SandboxUsage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cgroup v2: one cgroup per sandbox below a base cgroup next to the server (memory.max with
 * memory.swap.max 0, pids.max, cpu.max), and one leaf per spawned process tree, killed with
 * cgroup.kill. A sandbox freezes through its cgroup's cgroup.freeze (kernel 5.2 or later).
 */
public final class CgroupV2Driver implements CgroupDriver {
  private static final Logger log = LoggerFactory.getLogger(CgroupV2Driver.class);
  private static final String CONTROLLERS = "+memory +pids +cpu";

  private final Path base;
  private final CgroupFiles files;

  private CgroupV2Driver(Path base, CgroupFiles files) {
    this.base = base;
    this.files = files;
  }

  /**
   * The driver, or null when the server's cgroup cannot delegate the memory, pids and cpu
   * controllers. The kernel lets a cgroup that holds processes delegate none, and only the host's
   * root cgroup is exempt (the root of a cgroup namespace is not): a server in its own cgroup, as
   * under systemd or in a container, gets null here.
   */
  /**
   * The driver of {@code layout}, or null when it cannot be used, on the cgroup filesystem {@code
   * files} removes from.
   */
  static @Nullable CgroupV2Driver probe(CgroupLayout layout, String baseName, CgroupFiles files) {
    Path own = layout.v2Dir();
    if (own == null) {
      return null;
    }
    try {
      CgroupFiles.write(own.resolve("cgroup.subtree_control"), CONTROLLERS);
      Path base = Files.createDirectories(own.resolve(baseName));
      CgroupFiles.write(base.resolve("cgroup.subtree_control"), CONTROLLERS);
      return new CgroupV2Driver(base, files);
    } catch (IOException e) {
      log.info("cgroup v2 controllers cannot be delegated here: {}", e.toString());
      return null;
    }
  }

  @Override
  public Map<String, String> enforced() {
    return Map.of(
        "memory", "cgroup-v2", "pids", "cgroup-v2", "cpu", "cgroup-v2", "kill", "cgroup-v2");
  }

  @Override
  public boolean freezes() {
    return Files.exists(base.resolve("cgroup.freeze"));
  }

  @Override
  public SessionCgroup createSession(String name, int memoryMb, int pidsLimit, double cpus) {
    Path dir = base.resolve(name);
    try {
      Files.createDirectories(dir);
      CgroupFiles.write(dir.resolve("memory.max"), Long.toString(memoryMb * 1024L * 1024L));
      if (Files.exists(dir.resolve("memory.swap.max"))) {
        CgroupFiles.write(dir.resolve("memory.swap.max"), "0");
      }
      CgroupFiles.write(dir.resolve("pids.max"), Integer.toString(pidsLimit));
      long quota = Math.max(1000, Math.round(cpus * 100_000));
      CgroupFiles.write(dir.resolve("cpu.max"), quota + " 100000");
      return new V2Session(dir, files);
    } catch (IOException e) {
      files.removeTree(dir);
      throw new IllegalStateException("cannot create cgroup for " + name + ": " + e, e);
    }
  }

  @Override
  public void removeOthers(String prefix) {
    for (Path dir : CgroupFiles.children(base)) {
      if (!dir.getFileName().toString().startsWith(prefix)) {
        log.info("removing cgroup left by an earlier instance: {}", dir);
        kill(dir, files);
        files.removeTree(dir);
      }
    }
  }

  @Override
  public void close() {
    files.removeIfEmpty(base);
  }

  private static void kill(Path dir, CgroupFiles files) {
    Path killFile = dir.resolve("cgroup.kill");
    if (Files.exists(killFile)) {
      try {
        CgroupFiles.write(killFile, "1");
      } catch (IOException e) {
        log.debug("cgroup.kill failed for {}: {}", dir, e.toString());
      }
    }
    files.killAll(dir);
  }

  private record V2Session(Path dir, CgroupFiles files, AtomicLong counter)
      implements SessionCgroup {
    V2Session(Path dir, CgroupFiles files) {
      this(dir, files, new AtomicLong());
    }

    @Override
    public ProcessCgroup createProcessGroup(int memoryMb) {
      try {
        Path group = Files.createDirectory(dir.resolve("p" + counter.incrementAndGet()));
        if (memoryMb > 0) {
          // Needs the memory controller delegated to the session's children.
          CgroupFiles.write(dir.resolve("cgroup.subtree_control"), "+memory");
          CgroupFiles.write(group.resolve("memory.max"), Long.toString(memoryMb * 1024L * 1024L));
        }
        return new LeafProcessGroup(
            group,
            null,
            List.of(group.resolve("cgroup.procs")),
            files,
            () -> kill(group, files),
            null);
      } catch (IOException e) {
        throw new IllegalStateException("cannot create a process cgroup: " + e, e);
      }
    }

    @Override
    public void freeze() {
      setFrozen(true);
      if (!files.await(dir.resolve("cgroup.events"), V2Session::frozen)) {
        thaw();
        throw new IllegalStateException("the processes of " + dir + " did not all freeze");
      }
    }

    @Override
    public void thaw() {
      setFrozen(false);
    }

    private void setFrozen(boolean frozen) {
      try {
        CgroupFiles.write(dir.resolve("cgroup.freeze"), frozen ? "1" : "0");
      } catch (IOException e) {
        throw new IllegalStateException("cannot write cgroup.freeze of " + dir + ": " + e, e);
      }
    }

    /** Whether cgroup.events says the cgroup is frozen. */
    private static boolean frozen(String events) {
      return events.lines().anyMatch(line -> line.strip().equals("frozen 1"));
    }

    /**
     * {@code cpu.stat}'s {@code usage_usec}, {@code memory.current} and {@code memory.stat}'s file
     * cache.
     */
    @Override
    public SandboxUsage usage() {
      long micros = CgroupFiles.keyed(dir.resolve("cpu.stat"), "usage_usec");
      return CgroupFiles.usage(
          micros < 0 ? SandboxUsage.UNMEASURED : micros * 1000,
          CgroupFiles.number(dir.resolve("memory.current")),
          CgroupFiles.keyed(dir.resolve("memory.stat"), "file"));
    }

    @Override
    public void destroy() {
      // cgroup.kill kills frozen processes too.
      kill(dir, files);
      files.removeTree(dir);
    }
  }
}
