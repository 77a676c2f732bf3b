package dev.box.backend.microvm;

import dev.box.guard.GuestInit;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of one VM's QEMU: a {@code microvm} machine (no PCI, no firmware beyond qboot,
 * no legacy devices but the CMOS clock, from which the guest kernel reads the time at boot, and
 * without ACPI the PIT and PIC its timer calibrates against; ACPI tables or the kernel's command
 * line naming the devices, as {@link MicrovmFiles#acpi} says), the session's cpus rounded up as
 * vCPUs ({@link GuestConfig#vcpus}; the quota itself is QEMU's cgroup on the host, {@link
 * VmCgroups}) under KVM or TCG ({@link KvmProbe}), the VM's RAM as its memory ceiling (the
 * session's own memory limit is a cgroup in the guest: {@link GuestConfig}), and only virtio-mmio
 * devices: the console (to a log file), the shared root disk (read-only), the VM's config disk
 * (read-only: the agent's secret), a network card on QEMU's user-mode network ({@link
 * GuestInit#GUEST_NETWORK}) with the agent's port forwarded from one loopback port: with the
 * network off, {@code restrict=on}, so that the guest reaches nothing outside, and the port is the
 * host's; with it on, no restrict and no IPv6, and QEMU runs in a network namespace of its own
 * behind the egress firewall ({@link VmNetwork}), whose loopback has the port and is where QEMU's
 * gateway leads; and each shared host folder over virtio-9p ({@link ShareMounts}). QEMU's own
 * seccomp sandbox is on. Nothing from a request is on it but the memory size, a number: the shares
 * are named by their mounts in the VM's directory. A template and the VMs restored from it ({@link
 * VmState}) have two sockets more, a virtio-serial port for the host's go and QMP, with the same
 * devices in the same order.
 */
final class QemuCommand {
  /** TCG's translation cache, in MiB: QEMU's default reserves 1 GiB per VM. */
  private static final int TRANSLATION_CACHE_MB = 64;

  /** The word on the kernel's command line that makes box-vminit wait for the host's go. */
  static final String TEMPLATE_ARG = "box.template";

  /**
   * The guest kernel's command line: the console on the virtio console, no messages but errors, a
   * panic (its init failed) restarts at once, which {@code -no-reboot} turns into QEMU's exit, and
   * the TSC's frequency (see {@link MicrovmFiles}).
   */
  static String kernelArgs(long tscKhz) {
    return "console=hvc0 quiet panic=-1 tsc_early_khz=" + tscKhz;
  }

  /** How a VM's QEMU starts (see {@link VmState}). */
  enum Start {
    /** Boots the kernel; the guest reads its config disk as it boots. */
    BOOT,
    /**
     * Boots the kernel with {@code box.template}: the guest does what is the same in every VM, then
     * waits on the go port for the host's go, and QEMU has a QMP socket to be saved through.
     */
    TEMPLATE,
    /**
     * The same devices as {@link #TEMPLATE}, the saved state read from QEMU's stdin: QEMU waits,
     * paused once the state is in, for QMP's {@code cont}, then the guest for its go.
     */
    RESTORE
  }

  private QemuCommand() {}

  /**
   * The command.
   *
   * @param name the VM's name, which {@code -name} shows; QEMU runs in the VM's directory and names
   *     its files there relatively ({@link Vm})
   * @param config the session's limits (the VM's RAM), its shares and its network
   * @param hostPort the loopback port forwarded to the agent (the host's, or with the network on
   *     the VM's namespace's)
   * @param accel KVM (with the host's CPU model) or TCG
   * @param start whether QEMU boots, boots a template, or restores a template's state
   */
  static List<String> of(
      MicrovmFiles files,
      String name,
      GuestConfig config,
      int hostPort,
      KvmProbe.Accel accel,
      Start start) {
    List<String> argv = new ArrayList<>();
    argv.add(files.qemu().toString());
    add(argv, "-name", name);
    // Without ACPI the guest kernel calibrates its local APIC timer against the PIT, whose
    // interrupt reaches it through the PIC: without them it has no working clock event, and no
    // timer (a sleep, a poll's timeout) ever fires in a VM that booted.
    String legacy = files.acpi() ? "off" : "on";
    add(
        argv,
        "-machine",
        "microvm,x-option-roms=off,pit="
            + legacy
            + ",pic="
            + legacy
            + ",isa-serial=off,rtc=on,acpi="
            + (files.acpi() ? "on" : "off"));
    if (accel == KvmProbe.Accel.KVM) {
      add(argv, "-accel", "kvm");
      add(argv, "-cpu", "host");
    } else {
      add(argv, "-accel", "tcg,tb-size=" + TRANSLATION_CACHE_MB);
    }
    add(argv, "-smp", Integer.toString(config.vcpus()));
    add(argv, "-m", config.vmMemoryMb() + "M");
    argv.addAll(List.of("-nodefaults", "-no-user-config", "-nographic", "-no-reboot"));
    add(
        argv,
        "-sandbox",
        "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
    add(argv, "-kernel", files.kernel().toString());
    add(argv, "-initrd", Vm.INITRAMFS);
    boolean saved = start != Start.BOOT;
    add(argv, "-append", kernelArgs(files.tscKhz()) + (saved ? " " + TEMPLATE_ARG : ""));
    add(argv, "-chardev", "file,id=console,path=" + Vm.CONSOLE_LOG);
    add(argv, "-device", "virtio-serial-device");
    add(argv, "-device", "virtconsole,chardev=console");
    // The guest's entropy, from the host's generator: under TCG the guest kernel has no other
    // source that seeds it soon, and until it is seeded getrandom() blocks (python3 does not
    // start).
    add(argv, "-object", "rng-random,id=rng,filename=/dev/urandom");
    add(argv, "-device", "virtio-rng-device,rng=rng");
    if (saved) {
      // The go port (the guest's /dev/vport0p1) and QMP, each a socket QEMU listens on in the
      // VM's directory, which only root and the sandbox user may enter.
      add(argv, "-chardev", "socket,id=go,path=" + Vm.GO_SOCKET + ",server=on,wait=off");
      add(argv, "-device", "virtserialport,chardev=go,name=box.go,nr=1");
      add(argv, "-chardev", "socket,id=qmp,path=" + Vm.QMP_SOCKET + ",server=on,wait=off");
      add(argv, "-mon", "chardev=qmp,mode=control");
    }
    disk(argv, "root", files.rootfs());
    disk(argv, "config", Path.of(Vm.CONFIG_DISK));
    add(
        argv,
        "-netdev",
        "user,id=net,"
            + (config.networkOn() ? "ipv6=off" : "restrict=on")
            + ",net="
            + GuestInit.GUEST_NETWORK
            + ",hostfwd=tcp:127.0.0.1:"
            + hostPort
            + "-"
            + GuestInit.GUEST_ADDRESS
            + ":"
            + GuestInit.AGENT_PORT);
    add(argv, "-device", "virtio-net-device,netdev=net");
    // QEMU's 9p server resolves every path itself, below the share, never following a symlink.
    // It runs as the sandbox user, so in the "none" model what the guest writes lands on the host
    // as that uid's, with the modes the guest gave: a set-id mode is refused by box-guard's filter
    // in the guest, and at worst (a guest kernel taken over) would be set-id to that uid.
    List<GuestConfig.Share> shares = config.shares();
    for (int i = 0; i < shares.size(); i++) {
      String tag = GuestConfig.tag(i);
      add(
          argv,
          "-fsdev",
          "local,id="
              + tag
              + ",path="
              + ShareMounts.slot(i)
              + ",security_model=none"
              + (shares.get(i).readOnly() ? ",readonly=on" : ""));
      add(argv, "-device", "virtio-9p-device,fsdev=" + tag + ",mount_tag=" + tag);
    }
    if (start == Start.RESTORE) {
      add(argv, "-incoming", "fd:0");
    }
    return argv;
  }

  /** A read-only raw disk, in the order the guest names them (vda, vdb). */
  private static void disk(List<String> argv, String id, Path file) {
    add(argv, "-drive", "id=" + id + ",file=" + option(file) + ",format=raw,if=none,readonly=on");
    add(argv, "-device", "virtio-blk-device,drive=" + id);
  }

  private static void add(List<String> argv, String option, String value) {
    argv.add(option);
    argv.add(value);
  }

  /** A path as the value of a QEMU option: a comma in it is doubled. */
  static String option(Path path) {
    return path.toString().replace(",", ",,");
  }
}
