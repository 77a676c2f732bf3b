package dev.box.backend.microvm;

import dev.box.api.BoxValidationException;
import dev.box.guard.HostMounter;
import dev.box.guard.IdmappedFolder;
import dev.box.sandbox.WorkspaceSlots;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts each shared folder of a VM where its QEMU, which runs as the sandbox user, can open it: a
 * mount at {@code <vm dir>/shares/<n>}, a plain bind ({@code nosuid,nodev}) of a folder that user
 * can use as it is, an idmapped one ({@link HostMounter#idmap}, read-only) of a folder only its
 * owner can. The folder itself may lie below directories the sandbox user cannot enter (the
 * server's state directory, a private temporary directory): QEMU starts in its VM's directory and
 * names every file of it relatively, so it never walks those.
 *
 * <p>The mounts are in the host's mount namespace, made by a {@code box-mounter} of the backend's
 * own. A VM's directory is deleted only once no mount is left under it, so that nothing in a host
 * folder is ever deleted with it; a server removes what a crashed one left the same way.
 */
final class ShareMounts implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ShareMounts.class);

  /** The directory, in a VM's directory, of its shares' mounts. */
  static final String DIR = "shares";

  private final @Nullable HostMounter mounter;
  private final @Nullable String unavailable;

  private ShareMounts(@Nullable HostMounter mounter, @Nullable String unavailable) {
    this.mounter = mounter;
    this.unavailable = unavailable;
  }

  /** Starts the mounter, installed in {@code stateDir}; without one, no folder is shared. */
  static ShareMounts start(Path stateDir) {
    try {
      return new ShareMounts(HostMounter.start(stateDir), null);
    } catch (IOException e) {
      log.info("microvm backend: no host folders: {}", e.getMessage());
      return new ShareMounts(null, "box-mounter cannot run: " + e.getMessage());
    }
  }

  /** Null when folders can be shared, else why not. */
  @Nullable String unavailable() {
    return unavailable;
  }

  /** Where the share at {@code index} is mounted, relative to the VM's directory. */
  static Path slot(int index) {
    return Path.of(DIR, Integer.toString(index));
  }

  /**
   * Mounts every share of {@code shares} in {@code vmDir}, an idmapped one with {@code sandboxUid}
   * as its owner; on a failure, what was mounted stays for {@link #unstage}.
   *
   * @throws BoxValidationException when a folder cannot be mounted idmapped
   * @throws IOException when a bind fails, or no mounter runs
   */
  void stage(List<GuestConfig.Share> shares, Path vmDir, int sandboxUid) throws IOException {
    if (shares.isEmpty()) {
      return;
    }
    HostMounter m = mounter;
    if (m == null) {
      throw new IOException("host folders cannot be shared with a VM here: " + unavailable);
    }
    Path dir = Files.createDirectory(vmDir.resolve(DIR));
    Path stage = Files.createDirectory(dir.resolve(".stage"));
    for (int i = 0; i < shares.size(); i++) {
      GuestConfig.Share share = shares.get(i);
      Path slot = Files.createDirectory(vmDir.resolve(slot(i)));
      if (share.idmapped()) {
        try {
          m.idmap(IdmappedFolder.of(share.hostPath(), true), slot, sandboxUid, sandboxUid);
        } catch (IOException e) {
          throw new BoxValidationException(
              "host_path %s is not readable by the sandbox user, and cannot be mounted idmapped"
                      .formatted(share.hostPath())
                  + " to make it its owner (%s): give that uid access (chown, chgrp or chmod)"
                      .formatted(e.getMessage()));
        }
      } else {
        m.bind(share.hostPath(), stage, slot);
      }
    }
    Files.delete(stage);
  }

  /**
   * Detaches every mount under {@code vmDir}, deepest first; true when none is left, so that the
   * directory may be deleted.
   */
  boolean unstage(Path vmDir) {
    Path real;
    try {
      real = vmDir.toRealPath();
    } catch (IOException e) {
      return !Files.exists(vmDir);
    }
    return WorkspaceSlots.detachUnder(real, mounter);
  }

  @Override
  public void close() {
    HostMounter m = mounter;
    if (m != null) {
      m.close();
    }
  }
}
