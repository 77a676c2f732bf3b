package dev.box.backend.nsjail;

import dev.box.backend.bwrap.SandboxPool;
import dev.box.backend.bwrap.WorkspaceSlots;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workspace slots of pre-started jails. nsjail makes every mount of a jail private, so a mount
 * the server makes on a slot later never reaches a running jail (as it does for bubblewrap, {@link
 * WorkspaceSlots}). What a jail can be given instead is the slot itself: a pre-started jail binds
 * its empty slot at {@code /workspace}, and a session whose workspace is a new, empty private one
 * takes the jail by having the slot renamed onto its workspace directory. The jail keeps seeing the
 * same directory, which is now the session's: host files written there are visible inside, and the
 * jail's writes land on the host. A workspace that holds anything, is a mount (a quota), is not a
 * private one or lies on another file system is never served from the pool.
 *
 * <p>Nothing here ever deletes a non-empty directory.
 */
final class HandoverSlots implements SandboxPool.Slots {
  private static final Logger log = LoggerFactory.getLogger(HandoverSlots.class);

  private final Path root;
  private final Path workspaces;

  /**
   * The slots of one server instance, in {@code root}, for private workspaces in {@code workspaces}
   * (the same file system, or nothing is ever taken).
   */
  HandoverSlots(Path root, Path workspaces) {
    this.root = root;
    this.workspaces = workspaces;
  }

  /**
   * Whether {@code spec}'s workspace can be handed a slot: a private workspace, an empty directory
   * and not a mount.
   */
  boolean accepts(SandboxSpec spec) {
    SandboxMount workspace = spec.workspace();
    if (workspace == null || !workspace.boxOwned()) {
      return false;
    }
    Path dir = workspace.hostPath();
    return dir.startsWith(workspaces)
        && isEmptyDirectory(dir)
        && WorkspaceSlots.mountPointsUnder(dir).isEmpty();
  }

  @Override
  public Path create(String name) throws IOException {
    return Files.createDirectories(root.resolve(name));
  }

  /** Renames {@code slot} onto {@code workspace}, an empty directory, which it replaces. */
  @Override
  public void bind(Path slot, Path workspace) throws IOException {
    // rename(2) replaces an empty directory in one step, and fails on one that is not empty.
    Files.move(slot, workspace, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Removes {@code slot} when it was never handed over; a handed-over one is the session's. */
  @Override
  public void release(Path slot, boolean bound) {
    if (bound) {
      return;
    }
    try {
      Files.deleteIfExists(slot);
    } catch (IOException e) {
      log.warn("could not remove workspace slot {}: {}", slot.getFileName(), e.toString());
    }
  }

  /** Removes this instance's slots that are empty, and then its directory. */
  void close() {
    WorkspaceSlots.deleteEmptyChildren(root);
  }

  /** Removes the empty slots that other (crashed) instances left in {@code poolRoot}. */
  static void removeOthers(Path poolRoot, String instanceId) {
    WorkspaceSlots.sweepOthers(poolRoot, instanceId, WorkspaceSlots::deleteEmptyChildren);
  }

  private static boolean isEmptyDirectory(Path dir) {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      return !entries.iterator().hasNext();
    } catch (IOException e) {
      return false;
    }
  }
}
