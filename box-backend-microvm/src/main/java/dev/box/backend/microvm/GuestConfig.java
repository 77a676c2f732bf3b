package dev.box.backend.microvm;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * What one VM's guest is told about its session: its limits, enforced inside the guest, whether its
 * workspace is a host directory, and whether its network is on. The guest's init puts itself, and
 * so the agent and everything the agent starts, into a memory and pids cgroup of the guest's
 * cgroup2 ({@code memory.max}, {@code memory.swap.max} 0, {@code pids.max}) before it becomes the
 * sandbox user, who cannot change them. The VM gets the session's memory plus {@value #HEADROOM_MB}
 * MiB for the guest kernel and its caches, so that a command that outgrows the session's memory
 * meets the guest's OOM killer in the cgroup, as it would on any other backend, not the VM's own
 * limit.
 *
 * <p>It reaches the guest on the VM's config disk, after the agent's secret, as one ASCII line
 * {@code "<memory.max bytes> <pids.max> <1: mount the 9p share at /workspace, else 0> <1: network
 * on, else 0>\n"}: not on the kernel's command line, which a host user could read, though nothing
 * in it is secret.
 *
 * @param memoryMb the session's memory limit in MiB
 * @param pidsLimit the session's process limit
 * @param workspace the host directory shared at {@code /workspace} over virtio-9p, or null for a
 *     workspace in the VM's writable layer
 * @param networkOn whether the session's processes use the guest's card (its QEMU then runs behind
 *     the egress firewall: {@link VmNetwork}), else they see only loopback
 */
record GuestConfig(int memoryMb, int pidsLimit, @Nullable Path workspace, boolean networkOn) {
  /**
   * What the guest kernel and its caches take beside the session's memory: the kernel and its init
   * start in no less.
   */
  static final int HEADROOM_MB = 96;

  /** Checks that both limits are positive. */
  GuestConfig {
    if (memoryMb <= 0 || pidsLimit <= 0) {
      throw new IllegalArgumentException(
          "limits must be positive: memory_mb " + memoryMb + ", pids_limit " + pidsLimit);
    }
  }

  /** The VM's RAM (QEMU's {@code -m}), in MiB. */
  int vmMemoryMb() {
    return memoryMb + HEADROOM_MB;
  }

  /** The line the guest's init reads from the config disk. */
  byte[] configLine() {
    return ((long) memoryMb * 1024 * 1024
            + " "
            + pidsLimit
            + " "
            + (workspace == null ? 0 : 1)
            + " "
            + (networkOn ? 1 : 0)
            + "\n")
        .getBytes(StandardCharsets.US_ASCII);
  }
}
