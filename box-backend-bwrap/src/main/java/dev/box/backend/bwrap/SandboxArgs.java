package dev.box.backend.bwrap;

import dev.box.api.BoxNetworkMode;
import dev.box.api.internal.ShellScript;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.guard.ExecAgent;
import dev.box.sandbox.IdMaps;
import dev.box.sandbox.NamespaceStart;
import dev.box.sandbox.Privileges;
import dev.box.sandbox.SandboxEtc;
import dev.box.sandbox.UserModeNetwork;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The bubblewrap argument vector of one sandbox. Only paths and fixed words reach it; every host
 * path in it has been resolved and checked by the policy before.
 *
 * <p>bwrap makes the user namespace but does not map it: it blocks on its standard input until the
 * backend has written the maps ({@link IdMaps}), so that the sandbox user is an unprivileged host
 * uid instead of the server's. The sandbox always gets a network namespace of its own; with the
 * network on, the backend connects it to the outside through user-mode networking and a firewall
 * before the sandbox runs. The holder starts as root of the namespace and drops to the sandbox user
 * through {@link Privileges}.
 */
final class SandboxArgs {
  /**
   * What the sandbox runs until it is destroyed; "ready" tells the backend setup is complete. It
   * then execs its arguments: {@code sleep infinity}, or the exec agent.
   */
  private static final String HOLDER = ShellScript.load(SandboxArgs.class, "holder.sh");

  /** The sandbox user's home, which the holder makes. */
  private static final String HOME = "/home/box";

  /** Files of /proc that tell too much about the host or touch the kernel, as Docker masks them. */
  private static final List<String> PROC_MASKED_FILES =
      List.of(
          "/proc/kcore",
          "/proc/keys",
          "/proc/key-users",
          "/proc/latency_stats",
          "/proc/timer_list",
          "/proc/timer_stats",
          "/proc/sched_debug",
          "/proc/kallsyms",
          "/proc/sysrq-trigger");

  /** Directories of /proc hidden under an empty read-only tmpfs. */
  private static final List<String> PROC_MASKED_DIRS =
      List.of("/proc/acpi", "/proc/scsi", "/proc/asound", "/proc/driver");

  private SandboxArgs() {}

  /**
   * The argument vector.
   *
   * @param guard the host path of the syscall guard to mount and run the holder through, or null
   */
  static List<String> build(
      Path bwrap, SandboxSpec spec, Path etcDir, String tag, @Nullable Path guard)
      throws IOException {
    return build(bwrap, spec, etcDir, tag, guard, null);
  }

  /**
   * The argument vector.
   *
   * @param guard the host path of the syscall guard to mount and run the holder through, or null
   * @param agent the exec agent's mounts: then the agent is the holder, as the sandbox's PID 1
   */
  static List<String> build(
      Path bwrap,
      SandboxSpec spec,
      Path etcDir,
      String tag,
      @Nullable Path guard,
      NamespaceStart.@Nullable AgentMounts agent)
      throws IOException {
    List<String> a = new ArrayList<>();
    a.add(bwrap.toString());
    // The maps are written from outside while bwrap waits on stdin (IdMaps).
    add(a, "--unshare-user", "--userns-block-fd", "0");
    add(a, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
    add(a, "--unshare-net");
    add(a, "--die-with-parent", "--new-session", "--clearenv");
    add(a, "--hostname", "box");
    add(a, "--ro-bind", "/usr", "/usr");
    for (String dir : SandboxEtc.ROOT_DIRS) {
      Path host = Path.of("/", dir);
      if (Files.isSymbolicLink(host)) {
        add(a, "--symlink", Files.readSymbolicLink(host).toString(), host.toString());
      } else if (Files.isDirectory(host)) {
        add(a, "--ro-bind", host.toString(), host.toString());
      }
    }
    add(a, "--perms", "0755", "--dir", "/etc");
    for (String file : SandboxEtc.HOST_FILES) {
      add(a, "--ro-bind-try", file, file);
    }
    if (spec.network() == BoxNetworkMode.ON) {
      add(
          a,
          "--ro-bind",
          etcDir.resolve(UserModeNetwork.RESOLV_CONF).toString(),
          "/etc/resolv.conf");
    }
    for (String file : List.of("passwd", "group", "hosts")) {
      add(a, "--ro-bind", etcDir.resolve(file).toString(), "/etc/" + file);
    }
    proc(a);
    add(a, "--dev", "/dev");
    // POSIX shared memory and semaphores (Python's multiprocessing) need a /dev/shm the sandbox
    // user
    // can write; bwrap's is root's.
    add(a, "--perms", "1777", "--tmpfs", "/dev/shm");
    add(a, "--perms", "1777", "--tmpfs", "/tmp");
    // The holder makes /home/box as the sandbox user: bwrap's own directories belong to root.
    add(a, "--perms", "1777", "--tmpfs", "/home");
    if (agent != null) {
      // bwrap would make /.box for root only; the agent runs as the sandbox user.
      add(a, "--perms", "0755", "--dir", "/.box");
    }
    if (guard != null) {
      add(a, "--ro-bind", guard.toString(), Privileges.GUARD_IN_SANDBOX);
    }
    if (agent != null) {
      add(a, "--ro-bind", agent.binary().toString(), ExecAgent.SANDBOX_PATH);
      add(a, "--ro-bind", agent.socketDir().toString(), ExecAgent.SOCKET_DIR);
      // The agent reaps every orphan, as bwrap's own init would.
      add(a, "--as-pid-1");
    }
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      mount(a, workspace);
    }
    for (SandboxMount mount : spec.extraMounts()) {
      mount(a, mount);
    }
    if (spec.readOnlyRootfs()) {
      add(a, "--remount-ro", "/");
    } else {
      // bwrap's own directories belong to root of the namespace, not to the sandbox user.
      add(a, "--chmod", "1777", "/", "--chmod", "1777", "/etc");
    }
    add(a, "--setenv", "BOX_SANDBOX", tag);
    // bwrap reports the pid of the sandbox's init on stderr; the holder's stdout says "ready".
    add(a, "--info-fd", "2");
    add(a, "--chdir", "/");
    a.add("--");
    a.addAll(Privileges.dropToSandboxUser(guard != null));
    if (agent != null) {
      // The agent is the holder itself: it makes the home and says "ready".
      a.addAll(List.of(ExecAgent.holderCommand(HOME)));
    } else {
      add(a, "/bin/sh", "-c", HOLDER, "box-holder", "sleep", "infinity");
    }
    return a;
  }

  /**
   * /proc of the sandbox's pid namespace. bwrap mounts /proc/bus and /proc/irq read-only itself;
   * /proc/sys stays as it is, since no process in the sandbox has a capability to write it.
   */
  private static void proc(List<String> a) {
    add(a, "--proc", "/proc");
    for (String file : PROC_MASKED_FILES) {
      if (Files.exists(Path.of(file))) {
        add(a, "--ro-bind", "/dev/null", file);
      }
    }
    for (String dir : PROC_MASKED_DIRS) {
      if (Files.isDirectory(Path.of(dir))) {
        add(a, "--perms", "0555", "--tmpfs", dir, "--remount-ro", dir);
      }
    }
  }

  /**
   * Binds one mount. bwrap would create missing parents of the mount point readable by root only;
   * they are made first, readable by everyone, so that the sandbox user can reach the mount.
   */
  private static void mount(List<String> a, SandboxMount mount) {
    Path parent = Path.of(mount.sandboxPath()).getParent();
    List<String> parents = new ArrayList<>();
    for (Path p = parent; p != null && p.getNameCount() > 0; p = p.getParent()) {
      parents.add(0, p.toString());
    }
    for (String dir : parents) {
      add(a, "--perms", "0755", "--dir", dir);
    }
    add(
        a,
        mount.readOnly() ? "--ro-bind" : "--bind",
        mount.hostPath().toString(),
        mount.sandboxPath());
  }

  private static void add(List<String> a, String... words) {
    a.addAll(List.of(words));
  }
}
