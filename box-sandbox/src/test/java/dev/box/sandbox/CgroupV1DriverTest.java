package dev.box.sandbox;

import static dev.box.sandbox.FakeCgroupFs.read;
import static org.assertj.core.api.Assertions.assertThat;

import dev.box.core.backend.SandboxUsage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cgroup v1 driver against a {@link FakeCgroupFs}: tests do not run as a cgroup delegate, and a
 * real hierarchy would need root. Processes are real.
 */
class CgroupV1DriverTest {
  private static final String BASE = "box-1234";

  @TempDir Path root;

  private final FakeCgroupFs fs = new FakeCgroupFs();
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void killProcesses() {
    processes.forEach(Process::destroyForcibly);
  }

  private Path pids() {
    return root.resolve("pids/box.service");
  }

  private Path memory() {
    return root.resolve("memory/box.service");
  }

  private Path cpu() {
    return root.resolve("cpu,cpuacct/box.service");
  }

  private CgroupLayout layout() {
    return CgroupLayout.parse(
        List.of(
            "cgroup " + root.resolve("pids") + " cgroup rw,relatime,pids 0 0",
            "cgroup " + root.resolve("memory") + " cgroup rw,relatime,memory 0 0",
            "cgroup " + root.resolve("cpu,cpuacct") + " cgroup rw,relatime,cpu,cpuacct 0 0"),
        List.of("5:pids:/box.service", "4:memory:/box.service", "3:cpu,cpuacct:/box.service"));
  }

  /**
   * Makes {@code probeFile} writable in the cgroup the driver creates to probe {@code hierarchy},
   * as the kernel would.
   */
  private static void writable(Path hierarchy, String probeFile) throws IOException {
    Path probe = hierarchy.resolve(BASE).resolve("probe-" + ProcessHandle.current().pid());
    Files.createDirectories(probe);
    FakeCgroupFs.write(probe.resolve(probeFile), "max");
  }

  private CgroupV1Driver driver() throws IOException {
    writable(pids(), "pids.max");
    writable(memory(), "memory.limit_in_bytes");
    writable(cpu(), "cpu.cfs_quota_us");
    return Objects.requireNonNull(CgroupV1Driver.probe(layout(), BASE, fs.files));
  }

  /** The session the process group tests run in: 256 MiB, 64 processes, 1.5 CPUs. */
  private CgroupDriver.SessionCgroup session() throws IOException {
    return driver().createSession("inst_s1", 256, 64, 1.5);
  }

  /**
   * The {@code cgroup.procs} files a process group joins: its own pids child, the session's cpu
   * cgroup, and the memory cgroup {@code memoryCgroup} (below the base).
   */
  private List<Path> procsFiles(String memoryCgroup) {
    return List.of(
        pids().resolve(BASE + "/inst_s1/p1/cgroup.procs"),
        memory().resolve(BASE + "/" + memoryCgroup + "/cgroup.procs"),
        cpu().resolve(BASE + "/inst_s1/cgroup.procs"));
  }

  @Test
  void probe_usesEveryWritableHierarchy_andRemovesItsProbes() throws IOException {
    CgroupV1Driver driver = driver();

    assertThat(driver.enforced())
        .containsExactlyEntriesOf(
            FakeCgroupFs.enforced("cgroup-v1", "cgroup-v1", "cgroup-v1", "cgroup-v1"));
    assertThat(pids().resolve(BASE)).isEmptyDirectory();
    assertThat(memory().resolve(BASE)).isEmptyDirectory();
    assertThat(cpu().resolve(BASE)).isEmptyDirectory();
  }

  @Test
  void probe_withoutWritableMemoryAndCpu_limitsPidsOnly() throws IOException {
    writable(pids(), "pids.max");

    CgroupV1Driver driver = Objects.requireNonNull(CgroupV1Driver.probe(layout(), BASE, fs.files));

    assertThat(driver.enforced())
        .containsExactlyEntriesOf(FakeCgroupFs.enforced("none", "cgroup-v1", "none", "cgroup-v1"));
  }

  @Test
  void probe_withoutAWritablePidsHierarchy_givesNoDriver() throws IOException {
    writable(memory(), "memory.limit_in_bytes");

    assertThat(CgroupV1Driver.probe(layout(), BASE, fs.files)).isNull();
  }

  /**
   * A cpuacct hierarchy of its own, as on hosts that mount it apart from cpu: the session's cgroup
   * there counts its CPU time, and every process group joins it.
   */
  @Test
  void usage_readsCpuacctAndMemoryWithoutTheCache() throws IOException {
    Path cpuacct = root.resolve("cpuacct/box.service");
    CgroupLayout layout =
        CgroupLayout.parse(
            List.of(
                "cgroup " + root.resolve("pids") + " cgroup rw,relatime,pids 0 0",
                "cgroup " + root.resolve("memory") + " cgroup rw,relatime,memory 0 0",
                "cgroup " + root.resolve("cpuacct") + " cgroup rw,relatime,cpuacct 0 0"),
            List.of("5:pids:/box.service", "4:memory:/box.service", "2:cpuacct:/box.service"));
    writable(pids(), "pids.max");
    writable(memory(), "memory.limit_in_bytes");
    writable(cpuacct, "cpuacct.usage");
    CgroupDriver.SessionCgroup session =
        Objects.requireNonNull(CgroupV1Driver.probe(layout, BASE, fs.files))
            .createSession("inst_s1", 256, 64, 1.5);
    FakeCgroupFs.write(cpuacct.resolve(BASE + "/inst_s1/cpuacct.usage"), "123456789\n");
    assertThat(session.createProcessGroup(0).procsFiles())
        .contains(cpuacct.resolve(BASE + "/inst_s1/cgroup.procs"));
    Path memory = memory().resolve(BASE + "/inst_s1");
    FakeCgroupFs.write(memory.resolve("memory.usage_in_bytes"), "8388608\n");
    FakeCgroupFs.write(memory.resolve("memory.stat"), "cache 1\ntotal_cache 2097152\n");

    assertThat(session.usage()).isEqualTo(new SandboxUsage(123_456_789, 6_291_456, 2_097_152));
  }

  @Test
  void usage_withoutACpuacctHierarchy_leavesCpuUnmeasured() throws IOException {
    CgroupDriver.SessionCgroup session = session();
    Path memory = memory().resolve(BASE + "/inst_s1");
    FakeCgroupFs.write(memory.resolve("memory.usage_in_bytes"), "4096\n");
    FakeCgroupFs.write(memory.resolve("memory.stat"), "total_cache 0\n");

    assertThat(session.usage()).isEqualTo(new SandboxUsage(-1, 4096, 0));
  }

  @Test
  void createSession_writesTheLimitsInEachHierarchy() throws IOException {
    session();

    assertThat(read(pids().resolve(BASE + "/inst_s1/pids.max"))).isEqualTo("64");
    assertThat(read(memory().resolve(BASE + "/inst_s1/memory.limit_in_bytes")))
        .isEqualTo("268435456");
    assertThat(memory().resolve(BASE + "/inst_s1/memory.memsw.limit_in_bytes")).doesNotExist();
    assertThat(read(cpu().resolve(BASE + "/inst_s1/cpu.cfs_period_us"))).isEqualTo("100000");
    assertThat(read(cpu().resolve(BASE + "/inst_s1/cpu.cfs_quota_us"))).isEqualTo("150000");
  }

  @Test
  void createSession_withSwapAccounting_limitsMemoryAndSwapAlike() throws IOException {
    Files.createDirectories(memory().resolve(BASE));
    FakeCgroupFs.write(memory().resolve(BASE + "/memory.memsw.limit_in_bytes"), "max");

    session();

    assertThat(read(memory().resolve(BASE + "/inst_s1/memory.memsw.limit_in_bytes")))
        .isEqualTo("268435456");
  }

  @Test
  void processGroup_isAPidsChild_joiningTheSessionsMemoryAndCpuCgroups() throws IOException {
    CgroupDriver.ProcessCgroup group = session().createProcessGroup(0);

    assertThat(group.procsFiles()).containsExactlyElementsOf(procsFiles("inst_s1"));
    assertThat(group.addressSpaceLimitKib()).isZero();
  }

  @Test
  void processGroup_withItsOwnMemoryLimit_getsAMemoryChildWithTheLimit() throws IOException {
    CgroupDriver.ProcessCgroup group = session().createProcessGroup(100);

    assertThat(group.procsFiles()).containsExactlyElementsOf(procsFiles("inst_s1/p1"));
    assertThat(read(memory().resolve(BASE + "/inst_s1/p1/memory.limit_in_bytes")))
        .isEqualTo("104857600");
  }

  @Test
  void aProcessTheAgentForks_movesOnlyIntoItsOwnPidsCgroup() throws IOException {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup agent = session.createProcessGroup(0);
    CgroupDriver.ProcessCgroup group = session.createProcessGroup(0);

    assertThat(AgentRoute.moves(agent, group))
        .containsExactly(pids().resolve(BASE + "/inst_s1/p2/cgroup.procs"));
  }

  @Test
  void aProcessTheAgentForks_withItsOwnMemoryLimit_alsoMovesIntoItsMemoryCgroup()
      throws IOException {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup agent = session.createProcessGroup(0);
    CgroupDriver.ProcessCgroup group = session.createProcessGroup(100);

    assertThat(AgentRoute.moves(agent, group))
        .containsExactly(
            pids().resolve(BASE + "/inst_s1/p2/cgroup.procs"),
            memory().resolve(BASE + "/inst_s1/p2/cgroup.procs"));
  }

  @Test
  void processGroup_killsItsProcesses_andItsEmptyLeafServesTheNextProcess() throws Exception {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup group = session.createProcessGroup(100);
    Process process = sleepingIn("p1");

    group.kill();
    group.releaseIfEmpty();

    assertThat(process.isAlive()).isFalse();
    assertThat(memory().resolve(BASE + "/inst_s1/p1")).doesNotExist();
    assertThat(session.createProcessGroup(0).procsFiles().get(0))
        .isEqualTo(pids().resolve(BASE + "/inst_s1/p1/cgroup.procs"));
  }

  @Test
  void aReleasedGroup_killsNothingOfTheProcessThatReusesItsLeaf() throws Exception {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup first = session.createProcessGroup(0);
    FakeCgroupFs.write(pids().resolve(BASE + "/inst_s1/p1/cgroup.procs"), "");
    first.releaseIfEmpty();
    CgroupDriver.ProcessCgroup next = session.createProcessGroup(0);
    Process process = sleepingIn("p1");

    first.kill();
    first.terminate(-1);

    assertThat(process.isAlive()).isTrue();
    next.kill();
    assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aGroupWithAProcessLeft_keepsItsLeaf_andTheNextGetsANewOne() throws Exception {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup group = session.createProcessGroup(0);
    Process process = sleepingIn("p1");

    group.releaseIfEmpty();

    assertThat(session.createProcessGroup(0).procsFiles().get(0))
        .isEqualTo(pids().resolve(BASE + "/inst_s1/p2/cgroup.procs"));
    group.kill();
    assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
  }

  /** A {@code sleep} in the session's pids cgroup {@code leaf}, leaving it as it exits. */
  private Process sleepingIn(String leaf) throws IOException {
    Process process = new ProcessBuilder("sleep", "600").start();
    processes.add(process);
    FakeCgroupFs.exitWhenDone(pids().resolve(BASE + "/inst_s1/" + leaf), process);
    return process;
  }

  @Test
  void destroy_removesTheSessionFromEveryHierarchy() throws IOException {
    CgroupDriver.SessionCgroup session = session();
    session.createProcessGroup(100);

    session.destroy();

    assertThat(pids().resolve(BASE)).isEmptyDirectory();
    assertThat(memory().resolve(BASE)).isEmptyDirectory();
    assertThat(cpu().resolve(BASE)).isEmptyDirectory();
  }

  @Test
  void removeOthers_andClose_leaveOnlyWhatTheRunningInstanceOwns() throws IOException {
    CgroupV1Driver driver = driver();
    CgroupDriver.SessionCgroup own = driver.createSession("now_s1", 256, 64, 1.5);
    Files.createDirectories(pids().resolve(BASE + "/before_s1"));
    Files.createDirectories(memory().resolve(BASE + "/before_s1"));

    driver.removeOthers("now_");
    driver.close();

    assertThat(pids().resolve(BASE + "/before_s1")).doesNotExist();
    assertThat(memory().resolve(BASE + "/before_s1")).doesNotExist();
    assertThat(pids().resolve(BASE + "/now_s1")).isDirectory();

    own.destroy();
    driver.close();

    assertThat(pids().resolve(BASE)).doesNotExist();
    assertThat(memory().resolve(BASE)).doesNotExist();
    assertThat(cpu().resolve(BASE)).doesNotExist();
  }
}
