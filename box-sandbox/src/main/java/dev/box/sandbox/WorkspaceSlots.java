package dev.box.sandbox;

import dev.box.api.internal.ShellScript;
import dev.box.core.backend.HostCommand;
import dev.box.guard.HostMounter;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workspace mount points of pre-started sandboxes, and how a session's workspace is bound into
 * one that already runs.
 *
 * <p>A pre-started sandbox binds its empty slot, {@code <pool>/slots/<name>}, at its workspace
 * path. {@code slots} is a mount of its own with shared propagation, and bwrap makes the sandbox's
 * mounts slaves of the host's: a mount the server later makes on the slot appears at the sandbox's
 * workspace. That mount is made first in {@code <pool>/staging/<name>}, a private mount, with
 * {@code nosuid,nodev}, and then moved onto the slot: flags set by a remount would not propagate,
 * those of a moved mount do. The server's {@link HostMounter} makes these mounts with no process
 * per request; where it is missing or has failed, fixed scripts do, the paths their arguments.
 *
 * <p>Nothing here ever deletes recursively: a slot may hold a session's workspace.
 */
public final class WorkspaceSlots implements SandboxPool.Slots {
  private static final Logger log = LoggerFactory.getLogger(WorkspaceSlots.class);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(10);

  private static final String OPEN = ShellScript.load(WorkspaceSlots.class, "open-slots.sh");
  private static final String BIND = ShellScript.load(WorkspaceSlots.class, "bind-workspace.sh");

  private final Path root;
  private final Path slots;
  private final Path staging;
  private final @Nullable Path dataDir;
  private @Nullable HostMounter mounter;
  private boolean open;

  /**
   * The slots of one server instance, in {@code root} (nothing made yet); with a {@code dataDir},
   * mounts are made by a {@link HostMounter} installed there, else (or when it fails) by commands.
   */
  public WorkspaceSlots(Path root, @Nullable Path dataDir) {
    this.root = root;
    this.slots = root.resolve("slots");
    this.staging = root.resolve("staging");
    this.dataDir = dataDir;
  }

  /**
   * The store of {@code backend}'s slots: each instance's opened with {@link #openOrNull}, those of
   * crashed instances detached and removed with {@link #removeOthers}.
   */
  public static PreStarted.SlotStore store(String backend, Path dataDir) {
    return new PreStarted.SlotStore() {
      @Override
      public @Nullable WorkspaceSlots open(Path instanceDir) {
        return openOrNull(instanceDir, backend, dataDir);
      }

      @Override
      public void removeOthers(Path poolRoot, String instanceId) {
        WorkspaceSlots.removeOthers(poolRoot, instanceId);
      }
    };
  }

  /**
   * The opened slots in {@code root}, or null (logged) when they cannot be mounted here: then
   * {@code backend} pre-starts nothing. Mounts are made by a {@link HostMounter} installed in
   * {@code dataDir}.
   */
  public static @Nullable WorkspaceSlots openOrNull(Path root, String backend, Path dataDir) {
    WorkspaceSlots slots = new WorkspaceSlots(root, dataDir);
    try {
      slots.open();
      return slots;
    } catch (IOException e) {
      log.warn("{} backend: no pre-started sandboxes: {}", backend, e.getMessage());
      slots.close();
      return null;
    }
  }

  /** Makes {@code slots} a shared mount and {@code staging} a private one. */
  public synchronized void open() throws IOException {
    if (open) {
      return;
    }
    Files.createDirectories(slots);
    Files.createDirectories(staging);
    HostCommand.run(
        List.of("/bin/sh", "-c", OPEN, "box-pool", slots.toString(), staging.toString()),
        "",
        COMMAND_TIMEOUT);
    if (dataDir != null) {
      try {
        mounter = HostMounter.start(dataDir);
      } catch (IOException e) {
        log.warn("workspaces are bound with mount(8): {}", e.getMessage());
      }
    }
    open = true;
  }

  /** Whether mounts are made by the {@link HostMounter} (not by mount(8) commands). */
  public synchronized boolean mountsDirectly() {
    return mounter != null && mounter.usable();
  }

  /** The mounter while it works, else null (it failed once, or there is none). */
  private synchronized @Nullable HostMounter mounter() {
    HostMounter m = mounter;
    if (m != null && !m.usable()) {
      log.warn("box-mounter failed: workspaces are bound with mount(8) from now on");
      m.close();
      mounter = null;
      return null;
    }
    return m;
  }

  @Override
  public Path create(String name) throws IOException {
    Files.createDirectories(staging.resolve(name));
    return Files.createDirectories(slots.resolve(name));
  }

  /** Binds {@code workspace} (recursively) at {@code slot}, and so into the sandbox of the slot. */
  @Override
  public void bind(Path slot, Path workspace) throws IOException {
    Path stage = staging.resolve(slot.getFileName());
    HostMounter m = mounter();
    if (m != null) {
      m.bind(workspace, stage, slot);
      return;
    }
    HostCommand.run(
        List.of(
            "/bin/sh",
            "-c",
            BIND,
            "box-bind",
            workspace.toString(),
            stage.toString(),
            slot.toString()),
        "",
        COMMAND_TIMEOUT);
  }

  /**
   * Detaches what is bound at {@code slot} (when {@code bound}) and removes its empty directories;
   * failures are logged.
   */
  @Override
  public void release(Path slot, boolean bound) {
    try {
      if (bound) {
        detach(slot);
      }
      Files.deleteIfExists(slot);
      Files.deleteIfExists(staging.resolve(slot.getFileName()));
    } catch (IOException e) {
      log.warn("could not release workspace slot {}: {}", slot.getFileName(), e.toString());
    }
  }

  /** Detaches what is bound at {@code slot}: by the mounter, or by umount(8) if it fails. */
  private void detach(Path slot) throws IOException {
    HostMounter m = mounter();
    if (m != null) {
      try {
        m.detach(slot);
        return;
      } catch (IOException e) {
        log.warn(
            "box-mounter could not detach {}: {}; trying umount",
            slot.getFileName(),
            e.getMessage());
      }
    }
    HostCommand.run(List.of("umount", "--lazy", slot.toString()), "", COMMAND_TIMEOUT);
  }

  /** Detaches every mount under this instance's slots and removes its empty directories. */
  @Override
  public synchronized void close() {
    open = false;
    HostMounter m = mounter;
    mounter = null;
    if (m != null) {
      m.close();
    }
    detachAll(root);
  }

  /**
   * Detaches every mount left under {@code poolRoot}'s other instances' directories (by a server
   * that crashed), and removes them when empty.
   */
  public static void removeOthers(Path poolRoot, String instanceId) {
    sweepOthers(poolRoot, instanceId, WorkspaceSlots::detachAll);
  }

  /**
   * Passes the directory of each instance in {@code poolRoot} but {@code instanceId} (left by a
   * server that crashed) to {@code remove}.
   */
  public static void sweepOthers(Path poolRoot, String instanceId, Consumer<Path> remove) {
    if (!Files.isDirectory(poolRoot)) {
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(poolRoot)) {
      for (Path entry : entries) {
        if (!entry.getFileName().toString().equals(instanceId)) {
          log.info("removing workspace slots left by an earlier instance: {}", entry.getFileName());
          remove.accept(entry);
        }
      }
    } catch (IOException e) {
      log.warn("could not sweep workspace slots: {}", e.toString());
    }
  }

  /** Detaches the mounts at and under {@code dir}, deepest first, then removes the empty tree. */
  private static void detachAll(Path dir) {
    if (!detachUnder(dir, null)) {
      return;
    }
    for (String part : List.of("slots", "staging")) {
      deleteEmptyChildren(dir.resolve(part));
    }
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      log.warn("could not remove {}: {}", dir, e.toString());
    }
  }

  /**
   * Detaches the mounts at and under {@code dir} (a real path), deepest first, by {@code mounter}
   * while it is usable, else by {@code umount --lazy}; true when none is left, so that what is
   * under {@code dir} may be deleted without reaching into a mounted folder.
   */
  public static boolean detachUnder(Path dir, @Nullable HostMounter mounter) {
    List<Path> mounted = mountPointsUnder(dir);
    mounted.sort(Comparator.comparingInt(Path::getNameCount).reversed());
    for (Path point : mounted) {
      try {
        if (mounter != null && mounter.usable()) {
          mounter.detach(point);
        } else {
          HostCommand.run(List.of("umount", "--lazy", point.toString()), "", COMMAND_TIMEOUT);
        }
      } catch (IOException e) {
        log.warn("could not detach {}: {}", point, e.toString());
      }
    }
    List<Path> left = mountPointsUnder(dir);
    if (!left.isEmpty()) {
      log.warn("mounts remain under {}: {}; its directories are kept", dir, left);
    }
    return left.isEmpty();
  }

  /** Removes the empty entries of {@code dir}, then {@code dir} when it is empty. */
  public static void deleteEmptyChildren(Path dir) {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        Files.deleteIfExists(entry); // fails on a non-empty directory, as it must
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      log.warn("could not remove {}: {}", dir, e.toString());
    }
  }

  /** The mount points of this mount namespace at or under {@code dir}. */
  public static List<Path> mountPointsUnder(Path dir) {
    List<Path> found = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
        String[] fields = line.split(" ");
        if (fields.length > 4) {
          Path point = Path.of(unescape(fields[4]));
          if (point.startsWith(dir)) {
            found.add(point);
          }
        }
      }
    } catch (IOException e) {
      log.warn("cannot read /proc/self/mountinfo: {}", e.toString());
    }
    return found;
  }

  /** A mountinfo path with its octal escapes ({@code \040} for a space) decoded. */
  private static String unescape(String field) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '\\' && i + 3 < field.length()) {
        out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}
