package dev.box.backend.bwrap;

import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The bubblewrap argument vector of one sandbox. Only paths and fixed words reach it; every host
 * path in it has been resolved and checked by the policy before.
 */
final class SandboxArgs {
  /** The uid and gid of the sandbox user. */
  static final String SANDBOX_ID = "1000";

  /** What the sandbox runs until it is destroyed; "ready" tells the backend setup is complete. */
  private static final String HOLDER = "echo ready && exec sleep infinity";

  /** System directories that live in /usr on merged-usr hosts, or beside it on others. */
  private static final List<String> ROOT_DIRS =
      List.of("bin", "sbin", "lib", "lib32", "lib64", "libx32");

  /** Host files from /etc that programs need; never shadow, never the host's users. */
  private static final List<String> ETC_FILES =
      List.of(
          "/etc/ld.so.cache",
          "/etc/ld.so.conf",
          "/etc/ld.so.conf.d",
          "/etc/alternatives",
          "/etc/ssl",
          "/etc/ca-certificates",
          "/etc/localtime",
          "/etc/nsswitch.conf");

  private SandboxArgs() {}

  static List<String> build(Path bwrap, SandboxSpec spec, Path etcDir, String tag)
      throws IOException {
    List<String> a = new ArrayList<>();
    a.add(bwrap.toString());
    add(a, "--unshare-user", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID);
    add(a, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
    if (spec.network() == BoxNetworkMode.OFF) {
      a.add("--unshare-net");
    }
    add(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv");
    add(a, "--hostname", "box");
    add(a, "--ro-bind", "/usr", "/usr");
    for (String dir : ROOT_DIRS) {
      Path host = Path.of("/", dir);
      if (Files.isSymbolicLink(host)) {
        add(a, "--symlink", Files.readSymbolicLink(host).toString(), host.toString());
      } else if (Files.isDirectory(host)) {
        add(a, "--ro-bind", host.toString(), host.toString());
      }
    }
    for (String file : ETC_FILES) {
      add(a, "--ro-bind-try", file, file);
    }
    if (spec.network() == BoxNetworkMode.ON) {
      add(a, "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf");
    }
    for (String file : List.of("passwd", "group", "hosts")) {
      add(a, "--ro-bind", etcDir.resolve(file).toString(), "/etc/" + file);
    }
    add(a, "--proc", "/proc", "--dev", "/dev");
    add(a, "--perms", "1777", "--tmpfs", "/tmp");
    add(a, "--tmpfs", "/home", "--perms", "0700", "--dir", "/home/box");
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      mount(a, workspace);
    }
    for (SandboxMount mount : spec.extraMounts()) {
      mount(a, mount);
    }
    if (spec.readOnlyRootfs()) {
      add(a, "--remount-ro", "/");
    }
    add(a, "--setenv", "BOX_SANDBOX", tag);
    // bwrap reports the pid of the sandbox's init on stderr; the holder's stdout says "ready".
    add(a, "--info-fd", "2");
    add(a, "--chdir", "/");
    add(a, "--", "/bin/sh", "-c", HOLDER);
    return a;
  }

  private static void mount(List<String> a, SandboxMount mount) {
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
