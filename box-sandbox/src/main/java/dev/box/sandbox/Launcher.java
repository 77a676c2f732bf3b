package dev.box.sandbox;

import dev.box.api.internal.ShellScript;
import dev.box.core.backend.HostCommand;
import dev.box.core.backend.ProcessPrelude;
import dev.box.core.backend.ProcessSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Starts a process inside a running sandbox.
 *
 * <p>The host side is a fixed launcher script that waits for a go line on stdin (the backend takes
 * over the output pipes while nothing has touched them yet), writes its own pid into the process's
 * cgroups and then execs {@code setpriv --no-new-privs nsenter}, so the process and all it forks
 * are limited and killable from the first instruction. nsenter joins every namespace of the sandbox
 * as root of its user namespace, and {@link Privileges} drops to the sandbox user before anything
 * of the request runs. Inside the sandbox a fixed prelude enters the working directory and runs the
 * command. Nothing from the request is on any command line: the command, the working directory and
 * the environment travel in environment variables, and no host shell parses them.
 *
 * @param setpriv the host's setpriv
 * @param nsenter the host's nsenter
 * @param guard whether the process starts under box-guard's filter
 */
public record Launcher(Path setpriv, Path nsenter, boolean guard) {
  private static final String LAUNCHER = ShellScript.load(Launcher.class, "launcher.sh");

  static final Map<String, String> BASE_ENV =
      Map.of(
          "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "HOME", "/home/box",
          "USER", "box",
          "LOGNAME", "box",
          "SHELL", "/bin/sh",
          "LANG", "C.UTF-8",
          "PYTHONUNBUFFERED", "1");

  /**
   * The launcher of this host's setpriv and nsenter, or null when either is missing.
   *
   * @param guard whether processes start under box-guard's filter
   */
  public static @Nullable Launcher onHost(boolean guard) {
    Path setpriv = HostCommand.find("setpriv");
    Path nsenter = HostCommand.find("nsenter");
    return setpriv != null && nsenter != null ? new Launcher(setpriv, nsenter, guard) : null;
  }

  /**
   * The start of a command line that puts the command it is followed by into {@code group}'s
   * cgroups from its first instruction, at once (no go line; stdin is the command's). Nothing but
   * the cgroups' paths is on it.
   */
  public static List<String> joining(CgroupDriver.ProcessCgroup group) {
    return launch(group, true);
  }

  /** The launcher script's words up to the command: with a go line first unless {@code atOnce}. */
  private static List<String> launch(CgroupDriver.ProcessCgroup group, boolean atOnce) {
    List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", LAUNCHER, "box-launch"));
    if (atOnce) {
      argv.add("--at-once");
    }
    group.procsFiles().forEach(f -> argv.add(f.toString()));
    argv.add("--");
    return argv;
  }

  public Process start(long initPid, CgroupDriver.ProcessCgroup group, ProcessSpec spec)
      throws IOException {
    List<String> argv = launch(group, false);
    argv.addAll(List.of(setpriv.toString(), "--no-new-privs", nsenter.toString()));
    argv.addAll(List.of("--target", Long.toString(initPid), "--all", "--"));
    argv.addAll(Privileges.dropToSandboxUser(guard));
    argv.addAll(List.of("/bin/sh", "-c", ProcessPrelude.SCRIPT, "sh"));
    ProcessBuilder builder = new ProcessBuilder(argv);
    Map<String, String> env = builder.environment();
    env.clear();
    env.putAll(BASE_ENV);
    env.putAll(ProcessPrelude.environment(spec, group.addressSpaceLimitKib()));
    builder.directory(Path.of("/").toFile());
    return builder.start();
  }
}
