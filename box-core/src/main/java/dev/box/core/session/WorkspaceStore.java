package dev.box.core.session;

import dev.box.core.fs.FileTrees;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The private workspaces of sessions that mount no host directory, under the data directory. */
final class WorkspaceStore {
  private static final Logger log = LoggerFactory.getLogger(WorkspaceStore.class);

  private final Path root;

  WorkspaceStore(Path dataDir) {
    this.root = dataDir.resolve("workspaces");
  }

  /** Creates (or reuses) the workspace of the sandbox {@code name}. */
  Path create(String name) throws IOException {
    Path dir = root.resolve(name);
    Files.createDirectories(dir);
    return dir.toRealPath();
  }

  /** Removes a workspace and everything in it, never following links out of it. */
  void remove(Path dir) {
    try {
      FileTrees.deleteTree(dir);
    } catch (IOException e) {
      log.warn("could not remove workspace {}: {}", dir, e.toString());
    }
  }

  /** Removes every workspace that does not belong to {@code instanceId}. */
  void removeOrphans(String instanceId) throws IOException {
    if (!Files.isDirectory(root)) {
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(root)) {
      for (Path entry : entries) {
        if (!entry.getFileName().toString().startsWith(instanceId + "_")) {
          log.info("removing workspace left by an earlier instance: {}", entry.getFileName());
          remove(entry);
        }
      }
    }
  }
}
