package dev.box.backend.microvm;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * What one VM's guest is told about its session: its limits, enforced inside the guest, the uid of
 * its sandbox user, the host folders shared into it, and whether its network is on. The guest's
 * init puts itself, and so the agent and everything the agent starts, into a memory and pids cgroup
 * of the guest's cgroup2 ({@code memory.max}, {@code memory.swap.max} 0, {@code pids.max}) before
 * it becomes the sandbox user, who cannot change them. The VM gets the session's memory plus
 * {@value #HEADROOM_MB} MiB for the guest kernel and its caches, so that a command that outgrows
 * the session's memory meets the guest's OOM killer in the cgroup, as it would on any other
 * backend, not the VM's own limit.
 *
 * <p>It reaches the guest on the VM's config disk, after the agent's secret, as ASCII lines: first
 * {@code "<memory.max bytes> <pids.max> <1: /workspace is a share, else 0> <1: network on, else
 * 0>\n"}, then {@code "uid <sandbox uid>\n"}, then one {@code "share <tag> <ro|rw> <guest path>\n"}
 * per share, in the order the guest mounts them (a folder before what is mounted inside it); not on
 * the kernel's command line, which a host user could read, though nothing in it is secret.
 *
 * @param memoryMb the session's memory limit in MiB
 * @param pidsLimit the session's process limit
 * @param cpus the session's CPU quota in cores: the VM's vCPUs ({@link #vcpus}) and the quota of
 *     QEMU's cgroup on the host ({@link VmCgroups})
 * @param sandboxUid the uid (and gid) of the sandbox user, in the guest as on the host: QEMU runs
 *     as it, so a file the sandbox user may write in the guest is one QEMU may write on the host
 * @param shares the host folders shared over virtio-9p, none for a VM of the pool
 * @param networkOn whether the session's processes use the guest's card (its QEMU then runs behind
 *     the egress firewall: {@link VmNetwork}), else they see only loopback
 */
record GuestConfig(
    int memoryMb,
    int pidsLimit,
    double cpus,
    int sandboxUid,
    List<Share> shares,
    boolean networkOn) {
  /**
   * What the guest kernel and its caches take beside the session's memory: the kernel and its init
   * start in no less.
   */
  static final int HEADROOM_MB = 96;

  /** The most shares one VM takes: each is a virtio-mmio device, and the config disk is bounded. */
  static final int MAX_SHARES = 16;

  /** The most vCPUs a VM gets: the guest kernel built for it has room for no more. */
  static final int MAX_VCPUS = 8;

  /**
   * The config disk's size: the secret, the lines, and a NUL after them; box-vminit reads no more.
   */
  static final int DISK_BYTES = 128 * 1024;

  /**
   * One host folder shared into the guest.
   *
   * @param guestPath where the guest mounts it: absolute, checked by the server's policy
   * @param readOnly whether QEMU refuses every write to it (and the guest mounts it read-only)
   * @param idmapped whether only its owner may use it as the mode asks, so that it is mounted for
   *     QEMU through an idmapped mount that makes the sandbox user its owner
   */
  record Share(Path hostPath, String guestPath, boolean readOnly, boolean idmapped) {}

  /** Checks the limits, the uid and the shares. */
  GuestConfig {
    if (memoryMb <= 0 || pidsLimit <= 0) {
      throw new IllegalArgumentException(
          "limits must be positive: memory_mb " + memoryMb + ", pids_limit " + pidsLimit);
    }
    if (!(cpus > 0) || Double.isInfinite(cpus)) {
      throw new IllegalArgumentException("cpus must be positive: " + cpus);
    }
    if (sandboxUid <= 0) {
      throw new IllegalArgumentException("the sandbox uid must not be root: " + sandboxUid);
    }
    shares = List.copyOf(shares);
    if (shares.size() > MAX_SHARES) {
      throw new IllegalArgumentException(
          shares.size() + " host folders: a VM takes at most " + MAX_SHARES);
    }
  }

  /** The VM's RAM (QEMU's {@code -m}), in MiB. */
  int vmMemoryMb() {
    return memoryMb + HEADROOM_MB;
  }

  /**
   * The VM's vCPUs (QEMU's {@code -smp}): the session's cpus rounded up, at most {@value
   * #MAX_VCPUS}.
   */
  int vcpus() {
    return (int) Math.min(MAX_VCPUS, Math.ceil(cpus));
  }

  /** The 9p tag of the share at {@code index} of {@link #shares}. */
  static String tag(int index) {
    return "share" + index;
  }

  /** The lines the guest's init reads from the config disk. */
  byte[] configLine() {
    boolean workspace = shares.stream().anyMatch(s -> s.guestPath().equals("/workspace"));
    StringBuilder lines =
        new StringBuilder()
            .append((long) memoryMb * 1024 * 1024)
            .append(' ')
            .append(pidsLimit)
            .append(' ')
            .append(workspace ? 1 : 0)
            .append(' ')
            .append(networkOn ? 1 : 0)
            .append('\n')
            .append("uid ")
            .append(sandboxUid)
            .append('\n');
    for (int i = 0; i < shares.size(); i++) {
      Share share = shares.get(i);
      lines
          .append("share ")
          .append(tag(i))
          .append(share.readOnly() ? " ro " : " rw ")
          .append(share.guestPath())
          .append('\n');
    }
    return lines.toString().getBytes(StandardCharsets.UTF_8);
  }
}
