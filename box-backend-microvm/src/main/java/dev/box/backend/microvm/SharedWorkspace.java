package dev.box.backend.microvm;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import org.jspecify.annotations.Nullable;

/**
 * The host directory a session's VM shares at {@code /workspace} over virtio-9p: a persistent
 * session's own workspace, which Box made, so that its files outlive the VM and the server. QEMU
 * serves it in its {@code mapped-xattr} model, which keeps what the guest sees of each file (owner,
 * group, mode) in {@code user.virtfs.*} extended attributes; the directory itself gets them here,
 * so that the guest sees the sandbox user, uid and gid 1000, as its owner.
 */
final class SharedWorkspace {
  /** The sandbox user in the guest (box-vminit's). */
  private static final int SANDBOX_ID = 1000;

  /** A directory, rwxr-xr-x, as {@code st_mode} has it. */
  private static final int DIRECTORY_MODE = 040755;

  private SharedWorkspace() {}

  /**
   * The directory to share for {@code spec}, prepared, or null when its workspace stays in the VM's
   * writable layer: a session that is not persistent, or whose workspace is not the private one at
   * {@code /workspace}.
   *
   * @throws BoxException when the directory's file system keeps no extended attributes
   */
  static @Nullable Path of(SandboxSpec spec) {
    SandboxMount workspace = spec.workspace();
    if (!spec.persistent()
        || workspace == null
        || !workspace.boxOwned()
        || workspace.readOnly()
        || !workspace.sandboxPath().equals("/workspace")) {
      return null;
    }
    Path dir = workspace.hostPath();
    try {
      UserDefinedFileAttributeView attributes =
          Files.getFileAttributeView(dir, UserDefinedFileAttributeView.class);
      if (attributes == null) {
        throw new IOException("no extended attributes on its file system");
      }
      attributes.write("virtfs.uid", le32(SANDBOX_ID));
      attributes.write("virtfs.gid", le32(SANDBOX_ID));
      attributes.write("virtfs.mode", le32(DIRECTORY_MODE));
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE,
          "cannot share the workspace "
              + dir
              + " with the VM, which needs user extended attributes there: "
              + e.getMessage(),
          e);
    }
    return dir;
  }

  /** QEMU keeps the values as 32-bit little-endian numbers. */
  private static ByteBuffer le32(int value) {
    return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, value);
  }
}
