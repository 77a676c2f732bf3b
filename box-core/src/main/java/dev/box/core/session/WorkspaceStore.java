package dev.box.core.session;

import dev.box.api.internal.FileTrees;
import dev.box.core.backend.BackendStatus;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The private workspaces of sessions that mount no host directory, under the data directory.
 *
 * <p>A workspace without a quota is a subvolume of the {@link BtrfsStore} ({@code
 * store/workspaces/<name>}) where there is one, so that it can be forked and snapshotted for the
 * cost of what changes; else, and with a quota (an ext4 image of its own, {@link WorkspaceQuota}),
 * a directory {@code workspaces/<name>}. A workspace an older server left as a directory stays one.
 */
final class WorkspaceStore implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WorkspaceStore.class);
  private static final String AREA = "workspaces";

  private final Path root;
  private final WorkspaceQuota quota;
  private final BtrfsStore cow;
  private final MemoryState memoryState = new MemoryState();

  WorkspaceStore(Path dataDir, BtrfsStore cow) {
    this.root = dataDir.resolve(AREA);
    this.quota = new WorkspaceQuota(dataDir);
    this.cow = cow;
    memoryState.start();
  }

  /**
   * {@code status} with how workspace quotas are enforced and how forks are made added to its
   * {@code enforced} map: a {@code host_path} workspace is the operator's directory, so Box bounds
   * only its own.
   */
  BackendStatus reportQuota(BackendStatus status) {
    Map<String, String> enforced = new TreeMap<>(status.enforced());
    String why = quota.unavailable();
    enforced.put(
        "workspace_quota",
        why == null ? "private workspaces: a file system per session" : "none: " + why);
    enforced.put("fork", cow.describe());
    enforced.put("memory_state", memoryState.describe());
    return new BackendStatus(
        status.name(), status.available(), status.reason(), enforced, status.capabilities());
  }

  /** What a new workspace starts as a copy of: read only when a workspace is created. */
  @FunctionalInterface
  interface Seed {
    /**
     * The directory to copy.
     *
     * @throws dev.box.api.BoxException when there is none (a snapshot that does not exist)
     */
    Path directory() throws IOException;
  }

  /**
   * Creates (or reuses) the workspace of the sandbox {@code name}; with a quota above 0 it is a
   * file system of that many MiB (see {@link WorkspaceQuota}). A new one starts as a copy of {@code
   * seed} when one is given: a subvolume snapshot when both are in the store, else a copy of its
   * files; an existing one is kept as it is.
   *
   * @throws dev.box.api.BoxValidationException when a quota is asked for and cannot be enforced
   */
  Path create(String name, int quotaMb, @Nullable Seed seedOrNull) throws IOException {
    Path existing = find(name);
    if (existing != null) {
      if (quotaMb > 0) {
        quota.apply(existing, name, quotaMb);
      }
      return existing.toRealPath();
    }
    Path seed = seedOrNull == null ? null : seedOrNull.directory();
    if (quotaMb == 0 && cow.unavailable() == null) {
      Path dir = cow.area(AREA).resolve(name);
      if (seed != null && cow.holds(seed)) {
        cow.snapshot(seed, dir, false);
        return dir.toRealPath();
      }
      cow.create(dir);
      return seeded(dir, seed);
    }
    Path dir = root.resolve(name);
    Files.createDirectories(dir);
    if (quotaMb > 0) {
      try {
        quota.apply(dir, name, quotaMb);
      } catch (IOException | RuntimeException e) {
        remove(dir);
        throw e;
      }
    }
    return seeded(dir, seed);
  }

  private Path seeded(Path dir, @Nullable Path seed) throws IOException {
    if (seed != null) {
      try {
        TreeCopy.copy(seed, dir);
      } catch (IOException e) {
        remove(dir);
        throw e;
      }
    }
    return dir.toRealPath();
  }

  /** The workspace of {@code name} when it exists: a directory, or a subvolume of the store. */
  private @Nullable Path find(String name) throws IOException {
    Path dir = root.resolve(name);
    if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return dir;
    }
    Path area = cow.existingArea(AREA);
    Path subvolume = area == null ? null : area.resolve(name);
    return subvolume != null && Files.isDirectory(subvolume, LinkOption.NOFOLLOW_LINKS)
        ? subvolume
        : null;
  }

  /**
   * Removes a workspace and everything in it, never following links out of it, with its file system
   * when it has one.
   */
  void remove(Path dir) {
    if (cow.holds(dir)) {
      try {
        cow.delete(dir);
        return;
      } catch (IOException e) {
        // A subvolume the sandbox nested in it: emptied below, then removed as a directory.
        log.info("removing workspace {} file by file: {}", dir.getFileName(), e.toString());
      }
    } else {
      quota.remove(dir, dir.getFileName().toString());
    }
    try {
      FileTrees.deleteTree(dir);
    } catch (IOException e) {
      log.warn("could not remove workspace {}: {}", dir, e.toString());
    }
  }

  /**
   * Removes every workspace that does not belong to {@code instanceId}, except those {@code kept}
   * names (the workspaces of recorded persistent sessions).
   */
  void removeOrphans(String instanceId, Predicate<String> kept) throws IOException {
    removeOrphansIn(root, instanceId, kept);
    Path area = cow.existingArea(AREA);
    if (area != null) {
      removeOrphansIn(area, instanceId, kept);
    }
    quota.removeOrphanImages(root);
  }

  private void removeOrphansIn(Path dir, String instanceId, Predicate<String> kept)
      throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (!name.startsWith(instanceId + "_") && !kept.test(name)) {
          log.info("removing workspace left by an earlier instance: {}", entry.getFileName());
          remove(entry);
        }
      }
    }
  }

  /** Unmounts the store; the workspaces of persistent sessions stay in it. */
  @Override
  public void close() {
    cow.close();
  }
}
