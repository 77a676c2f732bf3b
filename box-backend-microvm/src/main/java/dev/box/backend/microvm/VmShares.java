package dev.box.backend.microvm;

import dev.box.api.BoxValidationException;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Which host folders a session's VM shares over virtio-9p, checked as on every backend: a {@code
 * host_path} workspace, each of {@code extra_mounts}, and a persistent session's own workspace, so
 * that its files outlive the VM and the server. Any other session's private workspace stays in the
 * VM's writable layer, so that such a session can take a VM of the pool (booted before its session
 * was known).
 *
 * <p>QEMU runs as the sandbox user's host uid, so a folder is shared when that uid can use it as
 * its mode asks ({@link MountOwnership}: Box's own folders are handed to it first). A read-only
 * folder only its owner can use is shared through an idmapped mount that makes the sandbox user its
 * owner, where the host makes them; a writable one is refused: QEMU would write there as the
 * folder's owner, and what keeps a set-id mode off those files (box-guard's filter) runs in the
 * guest, under the kernel a VM is there to distrust.
 */
final class VmShares {
  /** Why a writable folder is never idmapped for a VM. */
  static final String NO_WRITABLE_IDMAP =
      "a VM's writable folder is never idmapped: its writes would land as the folder's owner";

  private VmShares() {}

  /**
   * The shares of {@code spec}, in the order the guest mounts them (a folder before one mounted
   * inside it), the folders of Box handed to {@code sandboxUid}.
   *
   * @param workspaces the directory of private workspaces: anything under it is Box's
   * @param noIdmap why no folder may be idmapped here, or null when read-only ones may
   * @throws BoxValidationException when the sandbox user cannot use a folder as its mode asks, or a
   *     mount path cannot be told to the guest
   */
  static List<GuestConfig.Share> of(
      SandboxSpec spec, Path workspaces, int sandboxUid, @Nullable String noIdmap) {
    SandboxMount workspace = spec.workspace();
    // A session's own private workspace (Box made it, in the workspace store or under workspaces/)
    // lives in the VM's writable layer unless the session is persistent: so such a session can take
    // a pooled VM.
    if (workspace != null && !spec.persistent() && workspace.boxOwned()) {
      workspace = null;
    }
    SandboxSpec shared = spec.withMounts(workspace, spec.extraMounts());
    MountOwnership.prepareIdmapped(only(shared, false), workspaces, sandboxUid, NO_WRITABLE_IDMAP);
    List<SandboxMount> ownerOnly =
        MountOwnership.prepareIdmapped(only(shared, true), workspaces, sandboxUid, noIdmap);
    List<SandboxMount> mounts = new ArrayList<>(shared.extraMounts());
    if (workspace != null) {
      mounts.add(0, workspace);
    }
    if (mounts.size() > GuestConfig.MAX_SHARES) {
      throw new BoxValidationException(
          mounts.size()
              + " host folders: the microvm backend shares at most "
              + GuestConfig.MAX_SHARES
              + " with a VM");
    }
    List<GuestConfig.Share> shares = new ArrayList<>();
    for (SandboxMount mount : mounts) {
      shares.add(
          new GuestConfig.Share(
              mount.hostPath(),
              guestPath(mount.sandboxPath()),
              mount.readOnly(),
              ownerOnly.contains(mount)));
    }
    shares.sort(Comparator.comparingInt(s -> Path.of(s.guestPath()).getNameCount()));
    return shares;
  }

  /** {@code spec} with only its mounts of {@code readOnly}. */
  private static SandboxSpec only(SandboxSpec spec, boolean readOnly) {
    SandboxMount workspace = spec.workspace();
    return spec.withMounts(
        workspace != null && workspace.readOnly() == readOnly ? workspace : null,
        spec.extraMounts().stream().filter(m -> m.readOnly() == readOnly).toList());
  }

  /**
   * The mount path as the guest's init reads it, one line of the config disk: absolute, without a
   * trailing slash, and with no control character.
   */
  private static String guestPath(String mountPath) {
    String path = mountPath.replaceAll("/+$", "");
    if (!path.startsWith("/") || path.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      throw new BoxValidationException(
          "mount_path " + mountPath + " cannot be a VM's mount: it must be absolute, printable");
    }
    return path;
  }
}
