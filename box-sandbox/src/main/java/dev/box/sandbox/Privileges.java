package dev.box.sandbox;

import dev.box.guard.SyscallGuard;
import java.util.List;

/**
 * How a process inside a sandbox goes from root of the sandbox's user namespace to the sandbox
 * user: uid and gid 1000 (an unprivileged host uid through {@link IdMaps}), no supplementary
 * groups, an empty capability bounding set, no inheritable capabilities and no-new-privileges.
 *
 * <p>With the syscall guard mounted, the guard does it and then installs the syscall filter;
 * without it, {@code setpriv} from the host's /usr does the same minus the filter.
 */
public final class Privileges {
  /** Where the syscall guard is mounted inside every sandbox. */
  public static final String GUARD_IN_SANDBOX = SyscallGuard.SANDBOX_PATH;

  private Privileges() {}

  /**
   * The words that run the rest of the argument vector as the sandbox user.
   *
   * @param guard whether the syscall guard is mounted
   */
  public static List<String> dropToSandboxUser(boolean guard) {
    String id = SandboxEtc.SANDBOX_ID;
    if (guard) {
      return List.of(GUARD_IN_SANDBOX, "--uid", id, "--gid", id, "--");
    }
    return List.of(
        "/usr/bin/setpriv",
        "--reuid",
        id,
        "--regid",
        id,
        "--clear-groups",
        "--bounding-set",
        "-all",
        "--inh-caps",
        "-all",
        "--no-new-privs",
        "--");
  }
}
