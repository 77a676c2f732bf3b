package dev.box.core.backend;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes sure the sandbox user, whose host uid is not the server's, can use every mount as its mode
 * asks. Directories Box created for the session, and those inside a root the runtime manages, are
 * handed to the sandbox user; any other directory the user named keeps its owner and is refused,
 * before any sandbox starts, when its permissions do not let the sandbox user read it (read-only)
 * or write it (read-write): never a sandbox that starts and then fails with a bare "permission
 * denied".
 */
public final class MountOwnership {
  private MountOwnership() {}

  /**
   * Hands the directories Box created for {@code spec} to {@code uid} (user and group), then checks
   * that {@code uid} can use every mount.
   *
   * @param workspaces the directory of private workspaces: anything under it is Box's
   * @throws BoxValidationException naming the path, its owner and mode, when {@code uid} cannot use
   *     it
   */
  public static void prepare(SandboxSpec spec, Path workspaces, int uid) {
    List<SandboxMount> mounts = new ArrayList<>(spec.extraMounts());
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      mounts.add(0, workspace);
    }
    for (SandboxMount mount : mounts) {
      Path host = mount.hostPath();
      try {
        if (!mount.readOnly() && (mount.boxOwned() || host.startsWith(workspaces))) {
          Files.setAttribute(host, "unix:uid", uid);
          Files.setAttribute(host, "unix:gid", uid);
        }
        int owner = (Integer) Files.getAttribute(host, "unix:uid");
        int group = (Integer) Files.getAttribute(host, "unix:gid");
        int mode = (Integer) Files.getAttribute(host, "unix:mode") & 07777;
        int wanted = mount.readOnly() ? 05 : 03; // r-x to read a directory, -wx to write it
        boolean usable =
            owner == uid
                ? (mode >> 6 & wanted) == wanted
                : group == uid ? (mode >> 3 & wanted) == wanted : (mode & wanted) == wanted;
        if (!usable) {
          throw new BoxValidationException(
              "host_path %s (owner uid %d, group %d, mode %04o) is not %s by the sandbox user, host"
                      .formatted(
                          host, owner, group, mode, mount.readOnly() ? "readable" : "writable")
                  + " uid %d: give that uid access (chown, chgrp or chmod; ACLs are not consulted)%s"
                      .formatted(uid, mount.readOnly() ? "" : ", or mount it read-only"));
        }
      } catch (IOException | UnsupportedOperationException e) {
        throw new BoxValidationException("host_path " + host + " cannot be checked: " + e);
      }
    }
  }
}
