package dev.box.guard;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * A host directory to mount idmapped ({@link HostMounter#idmap}), as it was when it was checked:
 * its owner and group, and the device and inode that tell it from a directory swapped in at the
 * same path since.
 *
 * @param path the real (symlink-free) path
 * @param ownerUid the uid that owns it on disk
 * @param ownerGid its group on disk
 * @param device its device number ({@code st_dev})
 * @param inode its inode number ({@code st_ino})
 * @param readOnly whether the mount is read-only
 */
public record IdmappedFolder(
    Path path, int ownerUid, int ownerGid, long device, long inode, boolean readOnly) {

  /** Reads {@code path}'s owner, group, device and inode, not following a symbolic link. */
  public static IdmappedFolder of(Path path, boolean readOnly) throws IOException {
    LinkOption noFollow = LinkOption.NOFOLLOW_LINKS;
    return new IdmappedFolder(
        path,
        (Integer) Files.getAttribute(path, "unix:uid", noFollow),
        (Integer) Files.getAttribute(path, "unix:gid", noFollow),
        (Long) Files.getAttribute(path, "unix:dev", noFollow),
        (Long) Files.getAttribute(path, "unix:ino", noFollow),
        readOnly);
  }
}
