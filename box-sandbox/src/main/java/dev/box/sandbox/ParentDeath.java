package dev.box.sandbox;

import dev.box.api.internal.ShellScript;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Makes a jail, and every process it has forked, die with this server from its first instruction
 * on.
 *
 * <p>A jail asks the kernel for a parent-death signal itself (bwrap's {@code --die-with-parent}),
 * but only once it runs; and bwrap's clone, the sandbox's init to be, arms its own only after the
 * server has written the user maps and released it. A server killed in between (a pool refill
 * starts a sandbox right after each take, so a {@code kill -9} just after a create hits it) takes
 * bwrap along but leaves the clone blocked for ever, reparented to init, until the next server of
 * the data directory sweeps it.
 *
 * <p>So the jail runs under a fixed supervisor: {@code setpriv --pdeathsig TERM} arms the signal
 * before anything else runs, {@code setsid} makes a process group of the supervisor's own, and the
 * supervisor, a shell, first traps TERM to kill that whole group, then checks that its parent is
 * still this server (else the server died before the signal was armed), and only then starts the
 * jail and waits for it. Every process of the jail that has not left the group (bwrap's clone and
 * its init never do) dies with the server, whenever it dies. The signal follows the thread that
 * forked, which is why jails are forked by one long-lived thread ({@link
 * BackendRuntime#singleThread}).
 */
public final class ParentDeath {
  /**
   * Kills its process group on TERM; exits unless its parent is the server whose pid is {@code $1};
   * else runs the rest, standard input included, and exits as it does.
   */
  private static final String SUPERVISOR = ShellScript.load(ParentDeath.class, "supervise-jail.sh");

  /** Without setsid: dies with the server, but what the command forks is on its own. */
  private static final String CHECK = ShellScript.load(ParentDeath.class, "check-parent.sh");

  /** The exit status of a command whose server was gone before it could run. */
  static final int SERVER_GONE = 125;

  private ParentDeath() {}

  /**
   * {@code command} run so that it dies with the process {@code serverPid}, which must be the one
   * that starts it. The process started is the supervisor; the command is its child.
   *
   * @param setpriv the host's setpriv
   * @param setsid the host's setsid, or null (then the command is exec'd, and only it dies with the
   *     server)
   */
  static List<String> guarded(
      Path setpriv, @Nullable Path setsid, long serverPid, List<String> command) {
    List<String> argv = new ArrayList<>();
    if (setsid == null) {
      argv.addAll(List.of(setpriv.toString(), "--pdeathsig", "KILL", "--", "/bin/sh", "-c", CHECK));
    } else {
      argv.addAll(List.of(setpriv.toString(), "--pdeathsig", "TERM", "--", setsid.toString()));
      argv.addAll(List.of("/bin/sh", "-c", SUPERVISOR));
    }
    argv.addAll(List.of("box-jail", Long.toString(serverPid)));
    argv.addAll(command);
    return argv;
  }

  /** The jail a guarded process runs: its child when it supervises, else itself. */
  public static ProcessHandle jailOf(ProcessHandle guarded) {
    return guarded.children().findFirst().orElse(guarded);
  }

  /** Kills every process under a guarded process, then the process. */
  public static void killTree(ProcessHandle guarded) {
    guarded.descendants().forEach(ProcessHandle::destroyForcibly);
    guarded.destroyForcibly();
  }
}
