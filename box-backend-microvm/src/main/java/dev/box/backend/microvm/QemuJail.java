package dev.box.backend.microvm;

import dev.box.core.backend.HostCommand;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The namespaces a VM's QEMU runs in, made by bubblewrap (as root, before QEMU's uid changes): a
 * pid namespace (QEMU sees only itself; it dies with bubblewrap, and bubblewrap with the server),
 * IPC, UTS and cgroup namespaces, and a mount namespace whose root is an empty tmpfs holding only
 * what QEMU opens: {@code /usr} read-only with the {@code /lib}, {@code /lib64}, {@code /bin} and
 * {@code /sbin} links of a merged-/usr system, the loader's cache, a minimal {@code /dev} ({@code
 * /dev/kvm} beside it under KVM), a {@code /proc} of its pid namespace, QEMU itself, the guest
 * kernel and the root disk read-only at their host paths, and the VM's directory (its shares'
 * mounts in it) at its host path, its working directory. The directories above those are empty ones
 * of the tmpfs. Not a network namespace: a network-off VM's forward listens on the host's loopback,
 * and a network-on VM's QEMU is already in a namespace of its own ({@link VmNetwork}). Every path
 * on its command line is the server's own: nothing of a request.
 *
 * @param bwrap the host's bubblewrap
 */
record QemuJail(Path bwrap) {
  private static final Path USR = Path.of("/usr");

  /** The jail of this host's bubblewrap, or null where there is none. */
  static @Nullable QemuJail onHost() {
    Path bwrap = HostCommand.find("bwrap");
    return bwrap == null ? null : new QemuJail(bwrap);
  }

  /** What the health report says of QEMU's own isolation, with or without the jail. */
  static String enforced(@Nullable QemuJail jail, int sandboxUid) {
    String unprivileged =
        "uid and gid "
            + sandboxUid
            + ", no supplementary group, no capability, no-new-privileges, -sandbox on";
    return jail == null
        ? unprivileged + "; the server's namespaces: bubblewrap (bwrap) is not installed"
        : unprivileged
            + "; pid, mount, IPC, UTS and cgroup namespaces of its own (bubblewrap) that show it"
            + " /usr, its kernel and root disk and its VM's directory only";
  }

  /** The words before QEMU's own command (and before the change of its uid). */
  List<String> argv(MicrovmFiles files, Path vmDir, KvmProbe.Accel accel) {
    List<String> argv =
        new ArrayList<>(
            List.of(
                bwrap.toString(),
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--die-with-parent",
                "--new-session",
                "--hostname",
                "box-qemu",
                "--ro-bind",
                "/usr",
                "/usr",
                "--symlink",
                "usr/lib",
                "/lib",
                "--symlink",
                "usr/lib64",
                "/lib64",
                "--symlink",
                "usr/bin",
                "/bin",
                "--symlink",
                "usr/sbin",
                "/sbin",
                "--ro-bind-try",
                "/etc/ld.so.cache",
                "/etc/ld.so.cache",
                "--dev",
                "/dev",
                "--proc",
                "/proc"));
    if (accel == KvmProbe.Accel.KVM) {
      argv.addAll(List.of("--dev-bind", "/dev/kvm", "/dev/kvm"));
    }
    Set<Path> made = new HashSet<>();
    for (Path file : List.of(files.qemu(), files.kernel(), files.rootfs())) {
      if (!file.startsWith(USR)) {
        bind(argv, made, "--ro-bind", file);
      }
    }
    bind(argv, made, "--bind", vmDir);
    argv.addAll(List.of("--chdir", vmDir.toString(), "--"));
    return argv;
  }

  /**
   * Binds {@code path} at its own path, after making the directories above it (mode 0755: those of
   * bubblewrap's tmpfs are 0700 otherwise, which QEMU's uid could not pass).
   */
  private static void bind(List<String> argv, Set<Path> made, String how, Path path) {
    Path absolute = path.toAbsolutePath().normalize();
    Path parent = absolute.getParent();
    List<Path> above = new ArrayList<>();
    for (Path p = parent; p != null && p.getParent() != null; p = p.getParent()) {
      above.addFirst(p);
    }
    for (Path dir : above) {
      if (made.add(dir)) {
        argv.addAll(List.of("--perms", "0755", "--dir", dir.toString()));
      }
    }
    argv.addAll(List.of(how, absolute.toString(), absolute.toString()));
  }
}
