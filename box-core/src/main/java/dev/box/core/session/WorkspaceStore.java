package dev.box.core.session;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.function.Predicate;
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
      deleteTree(dir);
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
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.deleteIfExists(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
            Files.deleteIfExists(d);
            return FileVisitResult.CONTINUE;
          }
        });
  }
}
