package dev.box.sandbox;

import static dev.box.sandbox.FakeCgroupFs.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.core.backend.SandboxUsage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cgroup v2 driver against a {@link FakeCgroupFs}: this machine's controllers are on cgroup v1,
 * so the driver cannot run on the real thing here. Processes are real.
 */
class CgroupV2DriverTest {
  private static final String CONTROLLERS = "cpuset cpu io memory hugetlb pids rdma misc";

  @TempDir Path root;

  private final FakeCgroupFs fs = new FakeCgroupFs();
  private final List<Process> processes = new ArrayList<>();
  private Path own;

  @BeforeEach
  void serverCgroup() throws IOException {
    own = FakeCgroupFs.v2Cgroup(root.resolve("system.slice/box.service"), CONTROLLERS);
  }

  @AfterEach
  void killProcesses() {
    processes.forEach(Process::destroyForcibly);
  }

  private CgroupLayout layout() {
    return CgroupLayout.parse(
        List.of("cgroup2 " + root + " cgroup2 rw,nosuid,nodev,noexec,relatime 0 0"),
        List.of("0::/system.slice/box.service"));
  }

  private CgroupV2Driver driver() {
    return Objects.requireNonNull(CgroupV2Driver.probe(layout(), "box-1234", fs.files));
  }

  /** The session the process group tests run in: 256 MiB, 64 processes, 1.5 CPUs. */
  private CgroupDriver.SessionCgroup session() throws IOException {
    return driver().createSession("inst_s1", 256, 64, 1.5);
  }

  /** The cgroup of {@link #session}. */
  private Path sessionDir() {
    return own.resolve("box-1234/inst_s1");
  }

  private Process sleeper() throws IOException {
    Process process = new ProcessBuilder("sleep", "600").start();
    processes.add(process);
    return process;
  }

  @Test
  void usage_readsCpuTimeAndMemoryWithoutTheFileCache() throws IOException {
    CgroupDriver.SessionCgroup session = session();
    FakeCgroupFs.write(sessionDir().resolve("cpu.stat"), "usage_usec 2500\nuser_usec 2000\n");
    FakeCgroupFs.write(sessionDir().resolve("memory.current"), "10485760\n");
    FakeCgroupFs.write(sessionDir().resolve("memory.stat"), "anon 6291456\nfile 4194304\n");

    assertThat(session.usage()).isEqualTo(new SandboxUsage(2_500_000, 6_291_456, 4_194_304));
  }

  @Test
  void usage_withoutMemoryCounters_leavesMemoryUnmeasured() throws IOException {
    CgroupDriver.SessionCgroup session = session();
    FakeCgroupFs.write(sessionDir().resolve("cpu.stat"), "usage_usec 7\n");

    assertThat(session.usage()).isEqualTo(new SandboxUsage(7000, -1, -1));
  }

  @Test
  void probe_delegatesMemoryPidsAndCpuToItsBaseCgroup() throws IOException {
    CgroupV2Driver driver = driver();

    assertThat(read(own.resolve("cgroup.subtree_control"))).isEqualTo("+memory +pids +cpu");
    assertThat(read(own.resolve("box-1234/cgroup.subtree_control")))
        .isEqualTo("+memory +pids +cpu");
    assertThat(driver.enforced())
        .containsExactlyInAnyOrderEntriesOf(
            FakeCgroupFs.enforced("cgroup-v2", "cgroup-v2", "cgroup-v2", "cgroup-v2"));
  }

  @Test
  void probe_whereTheServersCgroupCannotBeWritten_givesNoDriver() throws IOException {
    Files.delete(own.resolve("cgroup.subtree_control"));
    Files.createDirectory(own.resolve("cgroup.subtree_control"));

    assertThat(CgroupV2Driver.probe(layout(), "box-1234", fs.files)).isNull();
  }

  @Test
  void probe_onAV1Host_givesNoDriver() {
    CgroupLayout v1 =
        CgroupLayout.parse(
            List.of("cgroup " + root + " cgroup rw,pids 0 0"), List.of("1:pids:/system.slice"));

    assertThat(CgroupV2Driver.probe(v1, "box-1234", fs.files)).isNull();
  }

  @Test
  void createSession_writesTheMemoryPidsAndCpuLimits() throws IOException {
    session();

    Path session = sessionDir();
    assertThat(read(session.resolve("memory.max"))).isEqualTo("268435456");
    assertThat(read(session.resolve("pids.max"))).isEqualTo("64");
    assertThat(read(session.resolve("cpu.max"))).isEqualTo("150000 100000");
    assertThat(session.resolve("memory.swap.max")).doesNotExist();
  }

  @Test
  void createSession_withSwapAccounting_turnsSwapOff() throws IOException {
    CgroupV2Driver driver = driver();
    Path session = FakeCgroupFs.v2Cgroup(sessionDir(), "memory pids cpu");
    FakeCgroupFs.write(session.resolve("memory.swap.max"), "max");

    driver.createSession("inst_s1", 256, 64, 1.5);

    assertThat(read(session.resolve("memory.swap.max"))).isEqualTo("0");
  }

  @Test
  void createSession_aTinyCpuShare_getsTheSmallestQuota() throws IOException {
    driver().createSession("inst_s1", 256, 64, 0.001);

    assertThat(read(sessionDir().resolve("cpu.max"))).isEqualTo("1000 100000");
  }

  @Test
  void createSession_thatCannotWriteItsLimits_failsAndLeavesNothing() throws IOException {
    CgroupV2Driver driver = driver();
    Files.createDirectories(sessionDir().resolve("pids.max"));

    assertThatThrownBy(() -> driver.createSession("inst_s1", 256, 64, 1.5))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("cannot create cgroup for inst_s1: ");
    assertThat(sessionDir()).doesNotExist();
  }

  @Test
  void processGroups_areNumberedLeavesOfTheSession() throws IOException {
    CgroupDriver.SessionCgroup session = session();

    CgroupDriver.ProcessCgroup first = session.createProcessGroup(0);
    CgroupDriver.ProcessCgroup second = session.createProcessGroup(0);

    Path dir = sessionDir();
    assertThat(first.procsFiles()).containsExactly(dir.resolve("p1/cgroup.procs"));
    assertThat(second.procsFiles()).containsExactly(dir.resolve("p2/cgroup.procs"));
    assertThat(first.addressSpaceLimitKib()).isZero();
    assertThat(dir.resolve("cgroup.subtree_control")).doesNotExist();
    assertThat(dir.resolve("p1/memory.max")).doesNotExist();
  }

  @Test
  void processGroup_withItsOwnMemoryLimit_getsTheMemoryControllerAndTheLimit() throws IOException {
    session().createProcessGroup(100);

    assertThat(read(sessionDir().resolve("cgroup.subtree_control"))).isEqualTo("+memory");
    assertThat(read(sessionDir().resolve("p1/memory.max"))).isEqualTo("104857600");
  }

  @Test
  void processGroup_kill_writesCgroupKillAndKillsItsProcesses() throws Exception {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup group = session.createProcessGroup(0);
    Path dir = FakeCgroupFs.v2Cgroup(sessionDir().resolve("p1"), "");
    Process process = sleeper();
    FakeCgroupFs.exitWhenDone(dir, process);

    group.kill();

    assertThat(read(dir.resolve("cgroup.kill"))).isEqualTo("1");
    assertThat(process.isAlive()).isFalse();
  }

  @Test
  void processGroup_terminate_signalsAllButTheLauncher() throws Exception {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup group = session.createProcessGroup(0);
    Path dir = sessionDir().resolve("p1");
    Process launcher = sleeper();
    Process child = sleeper();
    FakeCgroupFs.write(dir.resolve("cgroup.procs"), launcher.pid() + "\n" + child.pid() + "\n");

    group.terminate(launcher.pid());

    assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(child.exitValue()).isEqualTo(128 + 15);
    assertThat(launcher.isAlive()).isTrue();
  }

  @Test
  void processGroup_releaseIfEmpty_removesOnlyAnEmptyGroup() throws IOException {
    CgroupDriver.SessionCgroup session = session();
    CgroupDriver.ProcessCgroup empty = session.createProcessGroup(0);
    CgroupDriver.ProcessCgroup busy = session.createProcessGroup(0);
    Path dir = sessionDir();
    FakeCgroupFs.write(dir.resolve("p2/cgroup.procs"), "1\n");

    empty.releaseIfEmpty();
    busy.releaseIfEmpty();

    assertThat(dir.resolve("p1")).doesNotExist();
    assertThat(dir.resolve("p2")).isDirectory();
  }

  @Test
  void destroy_killsTheSessionThroughCgroupKill_andRemovesItsTree() throws Exception {
    CgroupDriver.SessionCgroup session = session();
    session.createProcessGroup(0);
    session.createProcessGroup(100);
    Path dir = FakeCgroupFs.v2Cgroup(sessionDir(), "memory pids cpu");
    Process process = sleeper();
    FakeCgroupFs.exitWhenDone(dir.resolve("p2"), process);

    session.destroy();

    assertThat(process.isAlive()).isFalse();
    assertThat(dir).doesNotExist();
    assertThat(fs.removed()).containsExactly(dir.resolve("p1"), dir.resolve("p2"), dir);
    assertThat(fs.killedWhenRemoved()).containsExactly(dir);
  }

  @Test
  void removeOthers_killsAndRemovesTheSessionsOfEarlierInstances() throws IOException {
    CgroupV2Driver driver = driver();
    driver.createSession("now_s1", 256, 64, 1.5);
    Path earlier = FakeCgroupFs.v2Cgroup(own.resolve("box-1234/before_s1"), "memory pids cpu");

    driver.removeOthers("now_");

    assertThat(earlier).doesNotExist();
    assertThat(fs.killedWhenRemoved()).containsExactly(earlier);
    assertThat(own.resolve("box-1234/now_s1")).isDirectory();
  }

  @Test
  void close_removesTheBaseOnlyWhenNoSessionIsLeft() throws IOException {
    CgroupV2Driver driver = driver();
    CgroupDriver.SessionCgroup session = driver.createSession("inst_s1", 256, 64, 1.5);

    driver.close();
    assertThat(own.resolve("box-1234")).isDirectory();

    session.destroy();
    driver.close();
    assertThat(own.resolve("box-1234")).doesNotExist();
    assertThat(own).isDirectory();
  }
}
