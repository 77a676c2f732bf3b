package dev.box.backend.nsjail;

import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.guard.HostMounter;
import dev.box.sandbox.NamespaceSandbox;
import dev.box.sandbox.PreStarted;
import dev.box.sandbox.SandboxPool;
import dev.box.sandbox.WorkspaceSlots;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workspace slots of pre-started jails. nsjail makes every mount of a jail private, so a mount
 * the server makes on a slot later never reaches a running jail (as it does for bubblewrap, {@link
 * WorkspaceSlots}). What a jail can be given instead is the slot itself: a pre-started jail binds
 * its empty slot at {@code /workspace}, and a session whose workspace is a new, empty private one
 * takes the jail by having the slot renamed onto its workspace directory. The jail keeps seeing the
 * same directory, which is now the session's: host files written there are visible inside, and the
 * jail's writes land on the host. Any other workspace (a {@code host_path}, a private one that
 * holds files or is a mount) is bound into the running jail's own mount namespace instead, by the
 * {@link HostMounter}: a bind made on the host and moved in by a process that joins the jail's
 * namespace. Without a working mounter those get jails of their own.
 *
 * <p>Nothing here ever deletes a non-empty directory.
 *
 * @param root where the slots of one server instance are
 * @param workspaces the directory of the private workspaces (the same file system as {@code root},
 *     or nothing is ever taken)
 * @param mounter binds {@code host_path} workspaces into the running jail's own mount namespace, or
 *     null for none
 */
record HandoverSlots(Path root, Path workspaces, @Nullable HostMounter mounter)
    implements SandboxPool.Slots {
  private static final Logger log = LoggerFactory.getLogger(HandoverSlots.class);

  /**
   * The store of the nsjail pool's slots: each instance's with the mounter of {@code dataDir}
   * (started when the slots open; without it, host_path sessions start jails of their own), and the
   * empty slots crashed instances left removed.
   */
  static PreStarted.SlotStore store(Path workspaces, Path dataDir) {
    return new PreStarted.SlotStore() {
      @Override
      public HandoverSlots open(Path instanceDir) {
        return new HandoverSlots(instanceDir, workspaces, mounter(dataDir));
      }

      @Override
      public void removeOthers(Path poolRoot, String instanceId) {
        HandoverSlots.removeOthers(poolRoot, instanceId);
      }
    };
  }

  /** The mounter that binds host_path workspaces into running jails, or null (logged). */
  private static @Nullable HostMounter mounter(Path dataDir) {
    try {
      return HostMounter.start(dataDir);
    } catch (IOException e) {
      log.warn("nsjail backend: host_path sessions start jails of their own: {}", e.getMessage());
      return null;
    }
  }

  /**
   * Whether {@code spec}'s workspace can be given to a running jail: a new private workspace (an
   * empty directory, not a mount, on the slots' file system) is handed the slot; with a working
   * mounter any other is joined, except a workspace in the workspace store, which gets a jail of
   * its own: the pooled jail would keep an empty slot that looks idle.
   */
  boolean accepts(SandboxSpec spec) {
    SandboxMount workspace = spec.workspace();
    return workspace != null
        && (handedOver(workspace) || (!inStore(workspace.hostPath()) && joinsHostPaths()));
  }

  /**
   * Whether {@code dir} is in the workspace store ({@code store/} beside {@code workspaces/} in the
   * state dir, docs/STATE.md), another file system than the slots'.
   */
  private boolean inStore(Path dir) {
    return dir.startsWith(workspaces.resolveSibling("store"));
  }

  /** Whether host_path workspaces can be given to running jails (the mounter works). */
  boolean joinsHostPaths() {
    return mounter != null && mounter.usable();
  }

  private boolean handedOver(SandboxMount workspace) {
    Path dir = workspace.hostPath();
    return workspace.boxOwned()
        && dir.startsWith(workspaces)
        && isEmptyDirectory(dir)
        && WorkspaceSlots.mountPointsUnder(dir).isEmpty();
  }

  /**
   * Hands the slot over to a new private workspace, or binds a {@code host_path} at the jail's
   * workspace path inside its own mount namespace (made on the host, moved in by {@link
   * HostMounter#join}): the jail's mounts are private, so nothing made on the host side reaches it.
   * The host path has passed the session's checks; the bind is {@code nosuid,nodev}, as a jail's
   * own workspace bind is.
   */
  @Override
  public void bind(Sandbox sandbox, Path slot, SandboxMount workspace) throws IOException {
    if (handedOver(workspace)) {
      bind(slot, workspace.hostPath());
      return;
    }
    HostMounter m = mounter;
    if (m == null || !(sandbox instanceof NamespaceSandbox jail)) {
      throw new IOException("this workspace cannot be given to a running jail here");
    }
    m.join(workspace.hostPath(), jail.initPid(), workspace.sandboxPath());
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

  /**
   * Removes {@code slot} when it is still there: never handed over, or its jail was given a
   * host_path instead (the slot stayed empty under it). A handed-over one is the session's
   * workspace now, and gone from here.
   */
  @Override
  public void release(Path slot, boolean bound) {
    try {
      Files.deleteIfExists(slot); // fails on a directory that is not empty, as it must
    } catch (IOException e) {
      log.warn("could not remove workspace slot {}: {}", slot.getFileName(), e.toString());
    }
  }

  /** Removes this instance's slots that are empty, and then its directory; ends the mounter. */
  @Override
  public void close() {
    if (mounter != null) {
      mounter.close();
    }
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
