package dev.box.sandbox;

import dev.box.core.backend.HostCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;

/**
 * The uid and gid maps of a sandbox's user namespace, written from the host while the jail waits
 * (bwrap does; nsjail writes its own maps from its configuration), and the ban on nested user
 * namespaces that every namespace backend puts on its sandboxes.
 *
 * <p>Root of the namespace is host root, so that the jail can set the sandbox up from paths only
 * root may reach; it holds no capability once the holder and every exec have dropped to the sandbox
 * user, and no-new-privileges with nosuid mounts keeps them from getting it back. The sandbox user,
 * uid 1000 inside, is {@code hostUid} outside: what it writes to a mount belongs to that
 * unprivileged uid, and a process that escapes the sandbox is nobody in particular.
 */
public final class IdMaps {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private IdMaps() {}

  /**
   * Writes both maps of the user namespace of process {@code pid}; each map is one write, as the
   * kernel requires.
   */
  public static void write(long pid, int hostUid) throws IOException {
    byte[] map =
        ("0 0 1\n" + SandboxEtc.SANDBOX_ID + " " + hostUid + " 1\n")
            .getBytes(StandardCharsets.US_ASCII);
    Path proc = Path.of("/proc", Long.toString(pid));
    Files.write(proc.resolve("uid_map"), map, StandardOpenOption.WRITE);
    Files.write(proc.resolve("gid_map"), map, StandardOpenOption.WRITE);
  }

  /**
   * Lets no process of the sandbox create a user namespace of its own (and with it network, mount
   * and other namespaces it could administer): the user namespace's own {@code
   * user.max_user_namespaces} is set to 0, from root joining it. bwrap's {@code --disable-userns}
   * does the same but cannot be combined with maps written from outside.
   */
  public static void forbidNestedNamespaces(Path nsenter, long pid) throws IOException {
    HostCommand.run(
        List.of(
            nsenter.toString(),
            "--user=/proc/" + pid + "/ns/user",
            "--",
            "/usr/bin/tee",
            "/proc/sys/user/max_user_namespaces"),
        "0\n",
        TIMEOUT);
  }
}
