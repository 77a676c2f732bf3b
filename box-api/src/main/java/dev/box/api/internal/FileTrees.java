package dev.box.api.internal;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import org.jspecify.annotations.Nullable;

/**
 * Whole-tree file operations that never follow a link out of the tree. Here, in the module every
 * other one depends on, so that the server, the client SDK, the agent host and the test harnesses
 * delete trees one way.
 */
public final class FileTrees {
  private FileTrees() {}

  /**
   * Deletes {@code dir} and everything below it; links are deleted, never followed. A missing
   * {@code dir}, or an entry that vanishes while the tree is walked, is not an error.
   *
   * @throws IOException if an entry that is there cannot be deleted; what was deleted before it
   *     stays deleted
   */
  public static void deleteTree(Path dir) throws IOException {
    walk(dir, false);
  }

  /**
   * Deletes what it can of {@code dir} and everything below it, the way {@link #deleteTree} does,
   * but goes on past an entry it cannot delete (a sandbox may leave files its host user cannot
   * remove): for temporary directories, whose leftovers are their owner's to remove.
   */
  public static void deleteTreeQuietly(Path dir) {
    try {
      walk(dir, true);
    } catch (IOException e) {
      // Not thrown when quiet.
    }
  }

  private static void walk(Path dir, boolean quiet) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            delete(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (quiet || e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, @Nullable IOException e)
              throws IOException {
            delete(d);
            return FileVisitResult.CONTINUE;
          }

          private void delete(Path path) throws IOException {
            try {
              Files.deleteIfExists(path);
            } catch (IOException e) {
              if (!quiet) {
                throw e;
              }
            }
          }
        });
  }
}
