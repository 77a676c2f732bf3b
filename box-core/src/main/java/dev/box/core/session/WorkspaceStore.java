package dev.box.core.session;

import dev.box.api.internal.FileTrees;
import dev.box.core.backend.BackendStatus;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The private workspaces of sessions that mount no host directory, under the data directory. */
final class WorkspaceStore {
  private static final Logger log = LoggerFactory.getLogger(WorkspaceStore.class);

  private final Path root;
  private final WorkspaceQuota quota;

  WorkspaceStore(Path dataDir) {
    this.root = dataDir.resolve("workspaces");
    this.quota = new WorkspaceQuota(dataDir);
  }

  /**
   * {@code status} with how workspace quotas are enforced added to its {@code enforced} map: a
   * {@code host_path} workspace is the operator's directory, so Box bounds only its own.
   */
  BackendStatus reportQuota(BackendStatus status) {
    Map<String, String> enforced = new TreeMap<>(status.enforced());
    String why = quota.unavailable();
    enforced.put(
        "workspace_quota",
        why == null ? "private workspaces: a file system per session" : "none: " + why);
    return new BackendStatus(
        status.name(), status.available(), status.reason(), enforced, status.capabilities());
  }

  /**
   * Creates (or reuses) the workspace of the sandbox {@code name}; with a quota above 0 it is a
   * file system of that many MiB (see {@link WorkspaceQuota}).
   *
   * @throws dev.box.api.BoxValidationException when a quota is asked for and cannot be enforced
   */
  Path create(String name, int quotaMb) throws IOException {
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
    return dir.toRealPath();
  }

  /**
   * Removes a workspace and everything in it, never following links out of it, with its file system
   * when it has one.
   */
  void remove(Path dir) {
    quota.remove(dir, dir.getFileName().toString());
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
    if (!Files.isDirectory(root)) {
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(root)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (!name.startsWith(instanceId + "_") && !kept.test(name)) {
          log.info("removing workspace left by an earlier instance: {}", entry.getFileName());
          remove(entry);
        }
      }
    }
    quota.removeOrphanImages(root);
  }
}
