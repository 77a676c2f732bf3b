package dev.box.guard;

import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The init of a micro-VM: a small static program ({@code src/main/c/box-vminit.c}) that the guest
 * kernel runs from the VM's initramfs. It loads the guest's drivers, lays the VM's writable layer
 * over its read-only root disk, brings up the network QEMU gives it, and execs box-guard and
 * box-agent (network mode) as the sandbox user; the microvm backend packs it, with both of them,
 * into each VM's initramfs.
 */
public final class GuestInit {
  /** The port the agent listens on inside the VM. */
  public static final int AGENT_PORT = 7000;

  /**
   * QEMU's user-mode network of every VM: not slirp4netns's 10.0.2.0/24, which a network-on VM's
   * QEMU reaches through its own namespace's way out.
   */
  public static final String GUEST_NETWORK = "10.0.4.0/24";

  /** The VM's address on {@link #GUEST_NETWORK}, where the agent listens. */
  public static final String GUEST_ADDRESS = "10.0.4.15";

  /**
   * QEMU's gateway on {@link #GUEST_NETWORK}: the guest's default route with the network on, which
   * QEMU maps to the loopback of the namespace it runs in (never the host's: see the microvm
   * backend).
   */
  public static final String GATEWAY = "10.0.4.2";

  private static final String NAME = "box-vminit";

  private GuestInit() {}

  /**
   * The program for this host's arch, or null when this build has none.
   *
   * @throws IOException when the jar cannot be read
   */
  public static byte @Nullable [] bytes() throws IOException {
    return HelperBinaries.bytes(NAME);
  }
}
