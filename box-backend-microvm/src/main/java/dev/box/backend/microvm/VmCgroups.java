package dev.box.backend.microvm;

import dev.box.sandbox.CgroupDriver;
import java.util.HexFormat;
import java.util.Random;

/**
 * The host's cgroups around each VM's QEMU: the session's {@code cpus} as a CPU quota over all of
 * QEMU's threads (its vCPUs, whose number is the quota rounded up: {@link GuestConfig#vcpus}, and
 * its own), and a memory and a task ceiling on QEMU itself, beside the guest's own limits: the VM's
 * RAM and {@value #QEMU_OVERHEAD_MB} MiB for QEMU (TCG's translation cache, its own heap and
 * buffers), and {@value #QEMU_TASKS} threads (QEMU's seccomp filter already refuses it new
 * processes). A QEMU is in its cgroups from its first instruction ({@link
 * dev.box.sandbox.Launcher#joining}), and they go with it.
 *
 * <p>Each server names its VMs' cgroups with a tag of its own, so that it removes what an earlier
 * server left (that server's QEMUs died with it) without touching its own.
 *
 * @param driver the host's cgroup driver (its base is this state directory's)
 * @param tag this server's tag, the start of every cgroup it makes
 */
record VmCgroups(CgroupDriver driver, String tag) {
  /** What QEMU takes beside the VM's RAM, in MiB. */
  static final int QEMU_OVERHEAD_MB = 256;

  /** The most threads one QEMU may have: its main loop, vCPUs, RCU and I/O workers. */
  static final int QEMU_TASKS = 256;

  /** The cgroups of a backend that names them with a new random tag. */
  static VmCgroups of(CgroupDriver driver, Random random) {
    byte[] bytes = new byte[4];
    random.nextBytes(bytes);
    return new VmCgroups(driver, "qemu-" + HexFormat.of().formatHex(bytes) + "-");
  }

  /**
   * Makes the cgroups of the VM {@code name}, with {@code config}'s CPU quota and QEMU's bounds.
   */
  CgroupDriver.SessionCgroup create(String name, GuestConfig config) {
    return driver.createSession(
        tag + name, config.vmMemoryMb() + QEMU_OVERHEAD_MB, QEMU_TASKS, config.cpus());
  }

  /** Kills and removes the cgroups of VMs other servers started. */
  void removeOthers() {
    driver.removeOthers(tag);
  }

  /** How the session's {@code cpus} is enforced, as the health report says it. */
  String cpuEnforced() {
    String cgroup = driver.enforced().getOrDefault("cpu", "none");
    return cgroup.equals("none")
        ? "none"
        : cgroup
            + ": a quota of cpus around QEMU (every thread of the VM), whose vCPUs are cpus"
            + " rounded up, at most "
            + GuestConfig.MAX_VCPUS;
  }
}
