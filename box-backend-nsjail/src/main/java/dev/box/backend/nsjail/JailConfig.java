package dev.box.backend.nsjail;

import dev.box.api.internal.ShellScript;
import dev.box.core.backend.SandboxMount;
import dev.box.guard.ExecAgent;
import dev.box.sandbox.NamespaceStart;
import dev.box.sandbox.SandboxEtc;
import dev.box.sandbox.UserModeNetwork;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The nsjail configuration of one jail, in nsjail's protobuf text format. Box writes it to a file
 * and passes nsjail only that file's path: no host path of a mount is ever parsed out of a command
 * line (nsjail's {@code --bindmount src:dst} would split a path at its colons), and nothing of the
 * request is on one.
 *
 * <p>The jail makes every namespace, maps root of its user namespace to host root (so that nsenter
 * can enter it and drop to the sandbox user, as for bubblewrap) and the sandbox user to an
 * unprivileged host uid, and runs the holder as that user with no capability and no-new-privileges.
 * The root is a tmpfs, read-only unless the spec wants it writable; /usr and the few host files of
 * /etc that programs need are bound read-only, /proc is the jail's own, /dev holds only the usual
 * character devices. nsjail's own time limit is off (the server times execs out itself) and its
 * rlimits are lifted for the holder, which runs nothing of the request: every exec gets its limits
 * from the session's cgroups.
 */
final class JailConfig {
  /** What the jail runs until it is destroyed: pid 1 of the jail, reaping orphans. */
  static final String HOLDER = ShellScript.load(JailConfig.class, "holder.sh");

  /**
   * The holder when processes start through the exec agent: the agent, as pid 1 of the jail; the
   * agent's command is its arguments.
   */
  static final String AGENT_HOLDER = ShellScript.load(JailConfig.class, "agent-holder.sh");

  private static final List<String> DEVICES =
      List.of("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty");

  private final StringBuilder text = new StringBuilder();

  private JailConfig() {}

  /**
   * The configuration of a jail.
   *
   * @param name the jail's name, and its holder's {@code $0}
   * @param hostUid the host uid (and gid) of the sandbox user
   * @param readOnlyRoot whether the root is read-only
   * @param networkOn whether the jail gets slirp4netns's resolver as /etc/resolv.conf
   * @param etcDir where the sandbox's passwd, group, hosts and resolv.conf are
   * @param guard the host path of the syscall guard, mounted at {@code guardInSandbox}, or null
   * @param guardInSandbox where the guard is mounted
   * @param mounts the workspace and extra mounts, host paths checked by the policy
   * @param setpriv the host's setpriv, which is the jail's too (/usr is the host's)
   * @param agent the exec agent's mounts, or null: then the holder runs under the guard, which the
   *     agent and everything it forks inherit
   * @param command the holder's script, run by /bin/sh with the jail's name as {@code $0} and, with
   *     an {@code agent}, the agent's command as its arguments
   */
  static String render(
      String name,
      int hostUid,
      boolean readOnlyRoot,
      boolean networkOn,
      Path etcDir,
      @Nullable Path guard,
      String guardInSandbox,
      List<SandboxMount> mounts,
      Path setpriv,
      NamespaceStart.@Nullable AgentMounts agent,
      String command) {
    JailConfig c = new JailConfig();
    c.field("name", name);
    c.line("mode: ONCE");
    c.field("hostname", "box");
    c.field("cwd", "/");
    c.line("time_limit: 0");
    c.line("log_level: ERROR");
    c.line("nice_level: 0");
    c.line("rlimit_as_type: INF");
    c.line("rlimit_cpu_type: INF");
    c.line("rlimit_fsize_type: INF");
    c.line("rlimit_nofile_type: HARD");
    c.line("rlimit_nproc_type: HARD");
    c.line("rlimit_stack_type: HARD");
    c.line("rlimit_core: 0");
    c.line("clone_newnet: true");
    c.line("clone_newcgroup: true");
    // The first mapping is who the holder runs as; root is mapped only for nsenter.
    for (String map : List.of("uidmap", "gidmap")) {
      c.idMap(map, SandboxEtc.SANDBOX_ID, Integer.toString(hostUid));
      c.idMap(map, "0", "0");
    }
    c.tmpfs("/", readOnlyRoot ? "mode=0755" : "mode=1777", !readOnlyRoot);
    c.bind("/usr", "/usr", false, true);
    for (String dir : SandboxEtc.ROOT_DIRS) {
      Path host = Path.of("/", dir);
      if (Files.isSymbolicLink(host)) {
        c.symlink(readLink(host), host.toString());
      } else if (Files.isDirectory(host)) {
        c.bind(host.toString(), host.toString(), false, true);
      }
    }
    for (String file : SandboxEtc.HOST_FILES) {
      Path host = Path.of(file);
      if (Files.exists(host)) {
        c.bind(file, file, false, Files.isDirectory(host));
      }
    }
    for (String file : SandboxEtc.FILES) {
      c.bind(etcDir.resolve(file).toString(), "/etc/" + file, false, false);
    }
    if (networkOn) {
      c.bind(
          etcDir.resolve(UserModeNetwork.RESOLV_CONF).toString(), "/etc/resolv.conf", false, false);
    }
    c.mount("mount { dst: \"/proc\" fstype: \"proc\" rw: false }");
    c.tmpfs("/dev", "mode=0755", true);
    for (String device : DEVICES) {
      if (Files.exists(Path.of(device))) {
        c.bind(device, device, true, false);
      }
    }
    c.symlink("/proc/self/fd", "/dev/fd");
    c.symlink("/proc/self/fd/0", "/dev/stdin");
    c.symlink("/proc/self/fd/1", "/dev/stdout");
    c.symlink("/proc/self/fd/2", "/dev/stderr");
    c.tmpfs("/dev/shm", "mode=1777", true);
    c.tmpfs("/tmp", "mode=1777", true);
    c.tmpfs("/home", "mode=1777", true);
    if (guard != null) {
      c.bind(guard.toString(), guardInSandbox, false, false);
    }
    if (agent != null) {
      c.bind(agent.binary().toString(), ExecAgent.SANDBOX_PATH, false, false);
      c.bind(agent.socketDir().toString(), ExecAgent.SOCKET_DIR, false, true);
    }
    for (SandboxMount mount : mounts) {
      c.bind(
          mount.hostPath().toString(),
          mount.sandboxPath(),
          !mount.readOnly(),
          Files.isDirectory(mount.hostPath()));
    }
    // nsjail's child outlives nsjail: setpriv makes the holder die with it. The jail's name is the
    // shell's $0, so that a holder can be told apart on the host.
    c.text.append("exec_bin { path: ").append(quote(setpriv.toString()));
    c.text.append(" arg: \"--pdeathsig\" arg: \"KILL\" arg: \"--\"");
    if (agent != null && guard != null) {
      c.text.append(" arg: ").append(quote(guardInSandbox)).append(" arg: \"--\"");
    }
    c.text.append(" arg: \"/bin/sh\" arg: \"-c\"");
    c.text.append(" arg: ").append(quote(command)).append(" arg: ").append(quote(name));
    if (agent != null) {
      for (String word : ExecAgent.sandboxCommand()) {
        c.text.append(" arg: ").append(quote(word));
      }
    }
    c.text.append(" }\n");
    return c.text.toString();
  }

  private static String readLink(Path link) {
    try {
      return Files.readSymbolicLink(link).toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void line(String line) {
    text.append(line).append('\n');
  }

  private void field(String key, String value) {
    text.append(key).append(": ").append(quote(value)).append('\n');
  }

  private void idMap(String map, String inside, String outside) {
    line(map + " { inside_id: " + quote(inside) + " outside_id: " + quote(outside) + " count: 1 }");
  }

  private void mount(String mount) {
    line(mount);
  }

  private void tmpfs(String dst, String options, boolean rw) {
    mount(
        "mount { dst: "
            + quote(dst)
            + " fstype: \"tmpfs\" options: "
            + quote(options)
            + " rw: "
            + rw
            + " is_dir: true nosuid: true nodev: true }");
  }

  private void bind(String src, String dst, boolean rw, boolean dir) {
    mount(
        "mount { src: "
            + quote(src)
            + " dst: "
            + quote(dst)
            + " is_bind: true rw: "
            + rw
            + " is_dir: "
            + dir
            + " nosuid: true }");
  }

  private void symlink(String target, String link) {
    mount("mount { src: " + quote(target) + " dst: " + quote(link) + " is_symlink: true }");
  }

  /**
   * A protobuf text-format string: quotes and backslashes escaped, control characters and every
   * byte outside ASCII as octal escapes.
   */
  static String quote(String value) {
    StringBuilder q = new StringBuilder("\"");
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c == '"' || c == '\\') {
        q.append('\\').append((char) c);
      } else if (c < 0x20 || c >= 0x7f) {
        q.append('\\').append(String.format(Locale.ROOT, "%03o", c));
      } else {
        q.append((char) c);
      }
    }
    return q.append('"').toString();
  }

  /** A list builder for callers that assemble the mounts of a spec. */
  static List<SandboxMount> mountsOf(@Nullable SandboxMount workspace, List<SandboxMount> extra) {
    List<SandboxMount> all = new ArrayList<>();
    if (workspace != null) {
      all.add(workspace);
    }
    all.addAll(extra);
    return all;
  }
}
