package dev.box.sandbox;

import dev.box.api.BoxValidationException;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.guard.HostMounter;
import dev.box.guard.IdmappedFolder;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Host folders of any owner, made usable by the sandbox user through idmapped mounts: a folder the
 * sandbox user cannot use as its mode asks, and its owner can, is mounted idmapped at a staging
 * directory of Box's ({@code <dataDir>/<backend>-idmapped/<instance>/<sandbox>/<n>}), where the
 * sandbox user is its owner, and the backend binds that staged mount instead of the folder. What
 * the sandbox writes there lands on disk as the folder's owner and group. Folders the sandbox user
 * can use as they are keep their plain bind.
 *
 * <p>The mounts are made by a {@link HostMounter} of its own, and only when a probe at start could
 * make one on the data directory's file system; otherwise such folders are refused as before, and
 * the refusal says why. Staged mounts are detached when their sandbox ends, and those a crashed
 * instance left by {@link #removeOthers}. Thread-safe.
 */
public final class IdmappedMounts implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(IdmappedMounts.class);

  /** The key of {@code enforced} in a backend's status. */
  public static final String HEALTH_KEY = "idmapped_mounts";

  private final Path root;
  private final String instanceId;
  private final int sandboxUid;
  private final @Nullable HostMounter mounter;
  private final @Nullable String unavailable;

  /**
   * Starts the mounter and tries an idmapped mount on the data directory's file system; without
   * one, or without box-guard's filter, it makes none and says why.
   *
   * @param backend the backend's name, of its staging directory
   * @param sandboxUid the host uid (and gid) of the sandbox user
   * @param filtered whether every sandbox process runs under box-guard's filter, the one thing that
   *     keeps a sandbox, the owner of such a folder on disk, from giving a file there a set-id bit
   *     (a set-user-ID-root executable for any host user, for a root-owned folder)
   */
  public IdmappedMounts(
      Path dataDir, String backend, String instanceId, int sandboxUid, boolean filtered) {
    this.root = dataDir.toAbsolutePath().normalize().resolve(backend + "-idmapped");
    this.instanceId = instanceId;
    this.sandboxUid = sandboxUid;
    HostMounter started = null;
    String why;
    if (!filtered) {
      why = "no box-guard filter to keep set-id bits off the files a sandbox writes there";
    } else {
      try {
        started = HostMounter.start(dataDir);
        why = probe(started, root.resolve(instanceId), sandboxUid);
      } catch (IOException e) {
        why = "box-mounter cannot run: " + e.getMessage();
      }
    }
    if (why != null && started != null) {
      started.close();
      started = null;
    }
    if (why != null) {
      log.info("{} backend: no idmapped mounts: {}", backend, why);
    }
    this.mounter = started;
    this.unavailable = why;
  }

  /** Null when an idmapped mount of a root-owned 0700 folder works here, else why not. */
  private static @Nullable String probe(HostMounter mounter, Path instanceDir, int sandboxUid)
      throws IOException {
    Path folder = Files.createDirectories(instanceDir.resolve("probe-folder"));
    Path point = Files.createDirectories(instanceDir.resolve("probe"));
    try {
      mounter.idmap(IdmappedFolder.of(folder, true), point, sandboxUid, sandboxUid);
      mounter.detach(point);
      return null;
    } catch (IOException e) {
      return "an idmapped mount of the data directory's file system failed: " + e.getMessage();
    } finally {
      Files.deleteIfExists(point);
      Files.deleteIfExists(folder);
    }
  }

  /** {@code status} with {@code enforced.idmapped_mounts}: {@code true}, or {@code false: why}. */
  public BackendStatus reported(BackendStatus status) {
    Map<String, String> enforced = new TreeMap<>(status.enforced());
    enforced.put(HEALTH_KEY, unavailable == null ? "true" : "false: " + unavailable);
    return new BackendStatus(
        status.name(), status.available(), status.reason(), enforced, status.capabilities());
  }

  /**
   * Checks every mount of {@code spec} ({@link MountOwnership#prepareIdmapped}), stages an idmapped
   * mount for each that needs one, and starts the sandbox on the spec whose such mounts come from
   * their staged mounts: a waiting one of {@code preStarted} when it serves that spec, else the one
   * {@code fresh} starts. The staged mounts go when the sandbox is destroyed, or at once when the
   * start fails.
   *
   * @param workspaces the directory of private workspaces
   * @param noIdmap why this spec must not have idmapped mounts (as for a sandbox that outlives the
   *     server), or null
   * @throws BoxValidationException when a mount cannot be used, even idmapped
   */
  public Sandbox start(
      SandboxSpec spec,
      Path workspaces,
      @Nullable String noIdmap,
      PreStarted preStarted,
      Function<SandboxSpec, Sandbox> fresh) {
    String why = unavailable != null ? "idmapped mounts are unavailable: " + unavailable : noIdmap;
    List<SandboxMount> ownerOnly =
        MountOwnership.prepareIdmapped(spec, workspaces, sandboxUid, why);
    if (ownerOnly.isEmpty()) {
      return takeOrStart(spec, workspaces, preStarted, fresh);
    }
    Path dir = root.resolve(instanceId).resolve(spec.sandboxName());
    AtomicBoolean staged = new AtomicBoolean(true);
    Runnable unstage =
        () -> {
          if (staged.getAndSet(false)) {
            remove(dir);
          }
        };
    try {
      SandboxSpec restaged = stage(spec, ownerOnly, dir);
      return new StagedSandbox(takeOrStart(restaged, workspaces, preStarted, fresh), unstage);
    } catch (RuntimeException e) {
      unstage.run();
      throw e;
    }
  }

  private Sandbox takeOrStart(
      SandboxSpec spec,
      Path workspaces,
      PreStarted preStarted,
      Function<SandboxSpec, Sandbox> fresh) {
    Sandbox taken = preStarted.take(spec, workspaces, sandboxUid);
    return taken != null ? taken : fresh.apply(spec);
  }

  /** {@code spec} with each of {@code ownerOnly} mounted idmapped under {@code dir}. */
  private SandboxSpec stage(SandboxSpec spec, List<SandboxMount> ownerOnly, Path dir) {
    HostMounter m = Objects.requireNonNull(mounter, "mounter");
    Map<SandboxMount, SandboxMount> staged = new IdentityHashMap<>();
    for (SandboxMount mount : ownerOnly) {
      Path point = dir.resolve(Integer.toString(staged.size()));
      try {
        Files.createDirectories(point);
        m.idmap(
            IdmappedFolder.of(mount.hostPath(), mount.readOnly()), point, sandboxUid, sandboxUid);
      } catch (IOException e) {
        throw new BoxValidationException(
            "host_path %s is not %s by the sandbox user, host uid %d, and cannot be mounted"
                    .formatted(
                        mount.hostPath(), mount.readOnly() ? "readable" : "writable", sandboxUid)
                + " idmapped to make it its owner (%s): give that uid access (chown, chgrp or chmod)"
                    .formatted(e.getMessage()));
      }
      staged.put(
          mount, new SandboxMount(point, mount.sandboxPath(), mount.readOnly(), mount.boxOwned()));
    }
    SandboxMount workspace = spec.workspace();
    List<SandboxMount> extras = new ArrayList<>();
    for (SandboxMount mount : spec.extraMounts()) {
      extras.add(staged.getOrDefault(mount, mount));
    }
    return spec.withMounts(
        workspace == null ? null : staged.getOrDefault(workspace, workspace), extras);
  }

  /** Removes the staged mounts of the instances other than this one (left by a crash). */
  public void removeOthers() {
    WorkspaceSlots.sweepOthers(root, instanceId, this::removeInstance);
  }

  private void removeInstance(Path dir) {
    List<Path> sandboxes = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      entries.forEach(sandboxes::add);
    } catch (IOException e) {
      log.warn("could not list {}: {}", dir, e.toString());
    }
    sandboxes.forEach(this::remove);
    WorkspaceSlots.deleteEmptyChildren(dir);
  }

  /**
   * Detaches the mounts at and under {@code dir}, deepest first, then removes its directories; they
   * are kept when a mount remains, so that nothing under a host folder is ever deleted.
   */
  private void remove(Path dir) {
    if (WorkspaceSlots.detachUnder(dir, mounter)) {
      WorkspaceSlots.deleteEmptyChildren(dir);
    }
  }

  /** Ends the mounter; staged mounts of live sandboxes stay until their sandbox ends. */
  @Override
  public void close() {
    HostMounter m = mounter;
    if (m != null) {
      m.close();
    }
  }
}
