package dev.box.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where the process's cgroups are, read from /proc/self/mounts and /proc/self/cgroup. */
class CgroupLayoutTest {

  /** A cgroup v1 host: every controller has its own hierarchy (cpu and cpuacct share one). */
  private static final List<String> V1_MOUNTS =
      List.of(
          "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0",
          "tmpfs /sys/fs/cgroup tmpfs ro,nosuid,nodev,noexec,mode=755 0 0",
          "cgroup /sys/fs/cgroup/systemd cgroup rw,nosuid,nodev,noexec,relatime,xattr,name=systemd 0 0",
          "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,nodev,noexec,relatime,cpu,cpuacct 0 0",
          "cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,nodev,noexec,relatime,memory 0 0",
          "cgroup /sys/fs/cgroup/pids cgroup rw,nosuid,nodev,noexec,relatime,pids 0 0");

  private static final List<String> V1_CGROUPS =
      List.of(
          "12:pids:/system.slice/box.service",
          "5:memory:/system.slice/box.service",
          "3:cpu,cpuacct:/system.slice/box.service",
          "1:name=systemd:/system.slice/box.service");

  /** A cgroup v2 host: one unified hierarchy. */
  private static final List<String> V2_MOUNTS =
      List.of(
          "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
          "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0");

  private static final List<String> V2_CGROUPS = List.of("0::/system.slice/box.service");

  /** This machine: v1 controllers, plus a cgroup2 mount that holds no controller. */
  private static final List<String> HYBRID_MOUNTS =
      List.of(
          "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0",
          "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0",
          "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0",
          "cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0",
          "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0",
          "cgroup /sys/fs/cgroup/devices cgroup rw,relatime,devices 0 0",
          "cgroup /sys/fs/cgroup/freezer cgroup rw,relatime,freezer 0 0",
          "cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0",
          "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0",
          "cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0",
          "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0");

  private static final List<String> HYBRID_CGROUPS =
      List.of(
          "9:name=systemd:/",
          "8:pids:/",
          "7:blkio:/",
          "6:freezer:/",
          "5:devices:/",
          "4:memory:/process_api/6244b8f48140b4dcd5ea00d1ffb3ec35",
          "3:cpuset:/",
          "2:cpuacct:/",
          "1:cpu:/",
          "0::/");

  @Test
  void v1_joinsEachControllersMountWithTheProcessPath() {
    CgroupLayout layout = CgroupLayout.parse(V1_MOUNTS, V1_CGROUPS);

    assertThat(layout.v1Dir("pids"))
        .isEqualTo(Path.of("/sys/fs/cgroup/pids/system.slice/box.service"));
    assertThat(layout.v1Dir("memory"))
        .isEqualTo(Path.of("/sys/fs/cgroup/memory/system.slice/box.service"));
    assertThat(layout.v1Dir("cpu"))
        .isEqualTo(Path.of("/sys/fs/cgroup/cpu,cpuacct/system.slice/box.service"));
    assertThat(layout.v1Dir("cpuacct")).isEqualTo(layout.v1Dir("cpu"));
    assertThat(layout.v2Dir()).isNull();
  }

  @Test
  void v2_joinsTheUnifiedMountWithTheProcessPath() {
    CgroupLayout layout = CgroupLayout.parse(V2_MOUNTS, V2_CGROUPS);

    assertThat(layout.v2Dir()).isEqualTo(Path.of("/sys/fs/cgroup/system.slice/box.service"));
    assertThat(layout.v1Dir("pids")).isNull();
    assertThat(layout.v1Dir("memory")).isNull();
  }

  @Test
  void v2_atTheRootOfItsNamespace_isTheMountItself() {
    CgroupLayout layout = CgroupLayout.parse(V2_MOUNTS, List.of("0::/"));

    assertThat(layout.v2Dir()).isEqualTo(Path.of("/sys/fs/cgroup"));
  }

  @Test
  void hybrid_usesTheV1Controllers_andNotTheEmptyUnifiedHierarchy() {
    CgroupLayout layout = CgroupLayout.parse(HYBRID_MOUNTS, HYBRID_CGROUPS);

    assertThat(layout.v1Dir("memory"))
        .isEqualTo(Path.of("/sys/fs/cgroup/memory/process_api/6244b8f48140b4dcd5ea00d1ffb3ec35"));
    assertThat(layout.v1Dir("pids")).isEqualTo(Path.of("/sys/fs/cgroup/pids"));
    assertThat(layout.v1Dir("cpu")).isEqualTo(Path.of("/sys/fs/cgroup/cpu"));
    assertThat(layout.v2Dir()).isNull();
  }

  @Test
  void v2_withANamedV1HierarchyBesideIt_isStillV2() {
    // What container runtimes set up for an old systemd on a v2 host: a v1 hierarchy with no
    // controller, only a name. The controllers are all in the unified hierarchy.
    List<String> mounts =
        List.of(
            V2_MOUNTS.get(1),
            "cgroup /sys/fs/cgroup/systemd cgroup rw,nosuid,nodev,noexec,relatime,xattr,name=systemd 0 0");
    List<String> cgroups = List.of("1:name=systemd:/box", "0::/box");

    CgroupLayout layout = CgroupLayout.parse(mounts, cgroups);

    assertThat(layout.v2Dir()).isEqualTo(Path.of("/sys/fs/cgroup/box"));
    assertThat(layout.v1Dir("name=systemd")).isEqualTo(Path.of("/sys/fs/cgroup/systemd/box"));
  }

  @Test
  void unmountedControllers_andMalformedLines_areLeftOut() {
    CgroupLayout layout =
        CgroupLayout.parse(
            List.of("cgroup /sys/fs/cgroup/pids", V1_MOUNTS.get(5), ""),
            List.of("garbage", "5:memory:/a", "12:pids:b", ""));

    assertThat(layout.v1Dir("memory")).isNull();
    assertThat(layout.v1Dir("pids")).isEqualTo(Path.of("/sys/fs/cgroup/pids/b"));
    assertThat(layout.v2Dir()).isNull();
  }

  @Test
  void nothingMounted_isNoCgroupAtAll() {
    CgroupLayout layout = CgroupLayout.parse(List.of(), V1_CGROUPS);

    assertThat(layout.v1Dir("pids")).isNull();
    assertThat(layout.v2Dir()).isNull();
  }
}
