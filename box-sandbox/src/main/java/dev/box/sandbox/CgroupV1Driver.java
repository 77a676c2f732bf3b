package dev.box.sandbox;

import dev.box.core.backend.SandboxUsage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cgroup v1: one cgroup per sandbox in each of the memory, pids and cpu hierarchies, nested under
 * the server's own cgroup of that hierarchy (the memory one may itself be nested). Each spawned
 * process tree gets a child cgroup in the pids hierarchy, so that it can be killed as a whole while
 * the sandbox's limits cover all of them. Where the freezer hierarchy is writable, every process of
 * the sandbox joins the sandbox's cgroup there too, which freezes them all at once; and where the
 * cpuacct hierarchy is, there too, whose counter is the sandbox's CPU time.
 *
 * @param pidsBase the server's cgroup in the pids hierarchy
 * @param memoryBase the server's cgroup in the memory hierarchy, or null when it is not writable
 * @param cpuBase the server's cgroup in the cpu hierarchy, or null when it is not writable
 * @param freezerBase the server's cgroup in the freezer hierarchy, or null when it is not writable
 * @param cpuacctBase the server's cgroup in the cpuacct hierarchy (which may be the cpu one), or
 *     null when it is not writable
 * @param memsw whether the memory hierarchy accounts swap, so that it is limited with memory
 * @param files what removes from the cgroup filesystems
 */
public record CgroupV1Driver(
    Path pidsBase,
    @Nullable Path memoryBase,
    @Nullable Path cpuBase,
    @Nullable Path freezerBase,
    @Nullable Path cpuacctBase,
    boolean memsw,
    CgroupFiles files)
    implements CgroupDriver {
  private static final Logger log = LoggerFactory.getLogger(CgroupV1Driver.class);
  private static final long CPU_PERIOD_US = 100_000;
  private static final String FREEZER_STATE = "freezer.state";
  private static final String CPUACCT_USAGE = "cpuacct.usage";

  /**
   * The driver for this host, or null when the pids hierarchy (needed to track process trees) is
   * not writable. Memory and cpu are used when they can be written, and reported when not.
   */
  /**
   * The driver of {@code layout}, or null when it cannot be used, on the cgroup filesystems {@code
   * files} removes from.
   */
  static @Nullable CgroupV1Driver probe(CgroupLayout layout, String baseName, CgroupFiles files) {
    Path pids = prepare(layout.v1Dir("pids"), baseName, "pids.max", files);
    if (pids == null) {
      return null;
    }
    Path memory = prepare(layout.v1Dir("memory"), baseName, "memory.limit_in_bytes", files);
    Path cpu = prepare(layout.v1Dir("cpu"), baseName, "cpu.cfs_quota_us", files);
    Path freezer = prepare(layout.v1Dir("freezer"), baseName, FREEZER_STATE, files);
    Path cpuacct = prepare(layout.v1Dir("cpuacct"), baseName, CPUACCT_USAGE, files);
    boolean memsw = memory != null && Files.exists(memory.resolve("memory.memsw.limit_in_bytes"));
    return new CgroupV1Driver(pids, memory, cpu, freezer, cpuacct, memsw, files);
  }

  private static @Nullable Path prepare(
      @Nullable Path hierarchy, String baseName, String probe, CgroupFiles files) {
    if (hierarchy == null) {
      return null;
    }
    Path base = hierarchy.resolve(baseName);
    Path test = base.resolve("probe-" + ProcessHandle.current().pid());
    try {
      Files.createDirectories(test);
      if (!Files.isWritable(test.resolve(probe))) {
        return null;
      }
      return base;
    } catch (IOException e) {
      log.debug("cgroup {} is not writable: {}", hierarchy, e.toString());
      return null;
    } finally {
      files.removeTree(test);
    }
  }

  @Override
  public Map<String, String> enforced() {
    Map<String, String> enforced = new LinkedHashMap<>();
    enforced.put("memory", memoryBase != null ? "cgroup-v1" : "none");
    enforced.put("pids", "cgroup-v1");
    enforced.put("cpu", cpuBase != null ? "cgroup-v1" : "none");
    enforced.put("kill", "cgroup-v1");
    return enforced;
  }

  @Override
  public boolean freezes() {
    return freezerBase != null;
  }

  @Override
  public SessionCgroup createSession(String name, int memoryMb, int pidsLimit, double cpus) {
    List<Path> dirs = new ArrayList<>();
    try {
      Path pids = Files.createDirectories(pidsBase.resolve(name));
      dirs.add(pids);
      CgroupFiles.write(pids.resolve("pids.max"), Integer.toString(pidsLimit));
      Path memory = null;
      if (memoryBase != null) {
        memory = Files.createDirectories(memoryBase.resolve(name));
        dirs.add(memory);
        String bytes = Long.toString(memoryMb * 1024L * 1024L);
        CgroupFiles.write(memory.resolve("memory.limit_in_bytes"), bytes);
        if (memsw) {
          CgroupFiles.write(memory.resolve("memory.memsw.limit_in_bytes"), bytes);
        }
      }
      Path cpu = null;
      if (cpuBase != null) {
        cpu = Files.createDirectories(cpuBase.resolve(name));
        dirs.add(cpu);
        CgroupFiles.write(cpu.resolve("cpu.cfs_period_us"), Long.toString(CPU_PERIOD_US));
        long quota = Math.max(1000, Math.round(cpus * CPU_PERIOD_US));
        CgroupFiles.write(cpu.resolve("cpu.cfs_quota_us"), Long.toString(quota));
      }
      Path freezer = null;
      if (freezerBase != null) {
        freezer = Files.createDirectories(freezerBase.resolve(name));
        dirs.add(freezer);
      }
      Path cpuacct = null;
      if (cpuacctBase != null && cpuacctBase.equals(cpuBase)) {
        cpuacct = cpu;
      } else if (cpuacctBase != null) {
        cpuacct = Files.createDirectories(cpuacctBase.resolve(name));
        dirs.add(cpuacct);
      }
      return new V1Session(pids, memory, cpu, freezer, cpuacct, files);
    } catch (IOException e) {
      dirs.forEach(files::removeTree);
      throw new IllegalStateException("cannot create cgroups for " + name + ": " + e, e);
    }
  }

  @Override
  public void close() {
    bases().forEach(files::removeIfEmpty);
  }

  /** The bases, the freezer's first: a frozen process dies only once thawed. */
  private List<Path> bases() {
    List<Path> bases = new ArrayList<>();
    if (freezerBase != null) bases.add(freezerBase);
    bases.add(pidsBase);
    if (memoryBase != null) bases.add(memoryBase);
    if (cpuBase != null) bases.add(cpuBase);
    if (cpuacctBase != null && !cpuacctBase.equals(cpuBase)) bases.add(cpuacctBase);
    return bases;
  }

  @Override
  public void removeOthers(String prefix) {
    for (Path base : bases()) {
      for (Path dir : CgroupFiles.children(base)) {
        if (!dir.getFileName().toString().startsWith(prefix)) {
          log.info("removing cgroup left by an earlier instance: {}", dir);
          thaw(dir);
          files.killAll(dir);
          files.removeTree(dir);
        }
      }
    }
  }

  /** Thaws the freezer cgroup {@code dir}; nothing happens where it is no freezer cgroup. */
  private static void thaw(Path dir) {
    Path state = dir.resolve(FREEZER_STATE);
    if (Files.exists(state)) {
      try {
        CgroupFiles.write(state, "THAWED");
      } catch (IOException e) {
        log.warn("cannot thaw cgroup {}: {}", dir, e.toString());
      }
    }
  }

  private static final class V1Session implements SessionCgroup {
    private final Path pids;
    private final @Nullable Path memory;
    private final @Nullable Path cpu;
    private final @Nullable Path freezer;
    private final @Nullable Path cpuacct;
    private final CgroupFiles files;
    private final AtomicLong counter = new AtomicLong();

    /**
     * Process cgroups of the pids hierarchy that ended empty; the session's teardown removes them.
     */
    private final EmptyCgroups emptyLeaves = new EmptyCgroups();

    V1Session(
        Path pids,
        @Nullable Path memory,
        @Nullable Path cpu,
        @Nullable Path freezer,
        @Nullable Path cpuacct,
        CgroupFiles files) {
      this.pids = pids;
      this.memory = memory;
      this.cpu = cpu;
      this.freezer = freezer;
      this.cpuacct = cpuacct;
      this.files = files;
    }

    @Override
    public ProcessCgroup createProcessGroup(int memoryMb) {
      try {
        String name = "p" + counter.incrementAndGet();
        Path group = emptyLeaves.take();
        if (group == null) {
          group = Files.createDirectory(pids.resolve(name));
        }
        List<Path> procsFiles = new ArrayList<>();
        procsFiles.add(group.resolve("cgroup.procs"));
        Path ownMemory = null;
        if (memory != null && memoryMb > 0) {
          // A child of the session's memory cgroup: both limits apply.
          ownMemory = Files.createDirectory(memory.resolve(name));
          String bytes = Long.toString(memoryMb * 1024L * 1024L);
          CgroupFiles.write(ownMemory.resolve("memory.limit_in_bytes"), bytes);
          if (Files.exists(ownMemory.resolve("memory.memsw.limit_in_bytes"))) {
            CgroupFiles.write(ownMemory.resolve("memory.memsw.limit_in_bytes"), bytes);
          }
          procsFiles.add(ownMemory.resolve("cgroup.procs"));
        } else if (memory != null) {
          procsFiles.add(memory.resolve("cgroup.procs"));
        }
        if (cpu != null) procsFiles.add(cpu.resolve("cgroup.procs"));
        if (freezer != null) procsFiles.add(freezer.resolve("cgroup.procs"));
        if (cpuacct != null && !cpuacct.equals(cpu))
          procsFiles.add(cpuacct.resolve("cgroup.procs"));
        Path leaf = group;
        return new LeafProcessGroup(
            leaf,
            ownMemory,
            procsFiles,
            this.files,
            () -> this.files.killAll(leaf),
            emptyLeaves::keep);
      } catch (IOException e) {
        throw new IllegalStateException("cannot create a process cgroup: " + e, e);
      }
    }

    @Override
    public void freeze() {
      // A task in an uninterruptible wait leaves the group FREEZING; writing FROZEN again retries
      // the tasks not frozen yet (the v1 freezer does not retry on its own), which a loaded host
      // needs more than once. Three writes, each awaited, before the group counts as one that
      // cannot freeze.
      for (int attempt = 1; ; attempt++) {
        Path state = writeFreezerState("FROZEN");
        if (files.await(state, content -> content.strip().equals("FROZEN"))) {
          return;
        }
        if (attempt == 3) {
          thaw();
          throw new IllegalStateException("the processes of " + state + " did not all freeze");
        }
      }
    }

    @Override
    public void thaw() {
      writeFreezerState("THAWED");
    }

    /** Writes {@code value} to the session's freezer state file, which it returns. */
    private Path writeFreezerState(String value) {
      Path state = requireFreezer().resolve(FREEZER_STATE);
      try {
        CgroupFiles.write(state, value);
      } catch (IOException e) {
        throw new IllegalStateException("cannot write " + value + " to " + state + ": " + e, e);
      }
      return state;
    }

    private Path requireFreezer() {
      if (freezer == null) {
        throw new IllegalStateException("the freezer hierarchy is not writable here");
      }
      return freezer;
    }

    /**
     * {@code cpuacct.usage}, and {@code memory.usage_in_bytes} with {@code memory.stat}'s {@code
     * total_cache}; both count the process groups below the sandbox's cgroups.
     */
    @Override
    public SandboxUsage usage() {
      Path acct = cpuacct;
      Path mem = memory;
      return CgroupFiles.usage(
          acct == null ? SandboxUsage.UNMEASURED : CgroupFiles.number(acct.resolve(CPUACCT_USAGE)),
          mem == null
              ? SandboxUsage.UNMEASURED
              : CgroupFiles.number(mem.resolve("memory.usage_in_bytes")),
          mem == null
              ? SandboxUsage.UNMEASURED
              : CgroupFiles.keyed(mem.resolve("memory.stat"), "total_cache"));
    }

    @Override
    public void destroy() {
      if (freezer != null) {
        CgroupV1Driver.thaw(freezer);
      }
      files.killAll(pids);
      files.removeTree(pids);
      if (memory != null) {
        files.killAll(memory);
        files.removeTree(memory);
      }
      if (cpu != null) {
        files.killAll(cpu);
        files.removeTree(cpu);
      }
      if (freezer != null) {
        files.killAll(freezer);
        files.removeTree(freezer);
      }
      if (cpuacct != null && !cpuacct.equals(cpu)) {
        files.killAll(cpuacct);
        files.removeTree(cpuacct);
      }
    }
  }
}
