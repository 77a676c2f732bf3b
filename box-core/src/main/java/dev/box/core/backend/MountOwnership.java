package dev.box.core.backend;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Makes sure the sandbox user, whose host uid is not the server's, can use every mount as its mode
 * asks. Directories Box created for the session, and those inside a root the runtime manages, are
 * handed to the sandbox user; any other directory the user named keeps its owner. One the sandbox
 * user cannot read (read-only) or write (read-write) as it is either goes through an idmapped mount
 * that makes the sandbox user its owner, where the backend makes them and the owner itself can use
 * it so, or is refused before any sandbox starts: never a sandbox that starts and then fails with a
 * bare "permission denied".
 */
public final class MountOwnership {
  private MountOwnership() {}

  /**
   * Hands the directories Box created for {@code spec} to {@code uid} (user and group), then checks
   * that {@code uid} can use every mount as it is.
   *
   * @param workspaces the directory of private workspaces: anything under it is Box's
   * @throws BoxValidationException naming the path, its owner and mode, when {@code uid} cannot use
   *     it
   */
  public static void prepare(SandboxSpec spec, Path workspaces, int uid) {
    check(spec, workspaces, uid, false, null);
  }

  /**
   * As {@link #prepare(SandboxSpec, Path, int)}, but a mount the sandbox user cannot use as it is
   * and its owner can is returned rather than refused: the caller mounts it idmapped. With {@code
   * noIdmap} (why this spec gets no idmapped mount) such a mount is refused too, saying why.
   *
   * @return the mounts that need the owner's identity, in the order of {@code spec}
   */
  public static List<SandboxMount> prepareIdmapped(
      SandboxSpec spec, Path workspaces, int uid, @Nullable String noIdmap) {
    return check(spec, workspaces, uid, true, noIdmap);
  }

  private static List<SandboxMount> check(
      SandboxSpec spec, Path workspaces, int uid, boolean idmapping, @Nullable String noIdmap) {
    List<SandboxMount> mounts = new ArrayList<>(spec.extraMounts());
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      mounts.add(0, workspace);
    }
    List<SandboxMount> ownerOnly = new ArrayList<>();
    for (SandboxMount mount : mounts) {
      if (needsOwner(mount, workspaces, uid, idmapping, noIdmap)) {
        ownerOnly.add(mount);
      }
    }
    return ownerOnly;
  }

  /**
   * Hands {@code mount} to {@code uid} when it is Box's; then false when {@code uid} can use it as
   * it is, true when only its owner can and it may be mounted idmapped, else refuses it.
   */
  private static boolean needsOwner(
      SandboxMount mount, Path workspaces, int uid, boolean idmapping, @Nullable String noIdmap) {
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
      if (usable) {
        return false;
      }
      boolean ownerCan = idmapping && owner != uid && (mode >> 6 & wanted) == wanted;
      if (ownerCan && noIdmap == null) {
        return true;
      }
      String but =
          ownerCan ? " (an idmapped mount would make it the owner, but " + noIdmap + ")" : "";
      throw new BoxValidationException(
          "host_path %s (owner uid %d, group %d, mode %04o) is not %s by the sandbox user, host"
                  .formatted(host, owner, group, mode, mount.readOnly() ? "readable" : "writable")
              + " uid %d%s: give that uid access (chown, chgrp or chmod; ACLs are not consulted)%s"
                  .formatted(uid, but, mount.readOnly() ? "" : ", or mount it read-only"));
    } catch (IOException | UnsupportedOperationException e) {
      throw new BoxValidationException("host_path " + host + " cannot be checked: " + e);
    }
  }
}
