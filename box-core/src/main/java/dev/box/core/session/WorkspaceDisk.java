package dev.box.core.session;

import dev.box.core.backend.SandboxUsage;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import org.jspecify.annotations.Nullable;

/**
 * The disk a private workspace uses. A workspace with a quota is a file system of its own ({@link
 * WorkspaceQuota}), whose statfs answers at once; any other is walked, as {@code du} does, up to
 * {@link #MAX_ENTRIES} entries, beyond which its use is unmeasured rather than a part of it.
 */
final class WorkspaceDisk {
  /** The most entries a walk visits: a workspace with more is not measured. */
  static final int MAX_ENTRIES = 100_000;

  private static final long MIB = 1024 * 1024;

  /** The bytes used and the bytes there are, each {@link SandboxUsage#UNMEASURED} when unknown. */
  record Use(long usedBytes, long totalBytes) {
    static final Use UNKNOWN = new Use(SandboxUsage.UNMEASURED, SandboxUsage.UNMEASURED);
  }

  private WorkspaceDisk() {}

  /**
   * The use of {@code workspace} (null when the session has none on this host), whose quota is
   * {@code quotaMb} MiB, or 0 for none.
   */
  static Use measure(@Nullable Path workspace, int quotaMb) {
    if (workspace == null || !Files.isDirectory(workspace)) {
      return Use.UNKNOWN;
    }
    try {
      FileStore store = Files.getFileStore(workspace);
      if (quotaMb > 0 && WorkspaceQuota.isMountPoint(workspace)) {
        long total = store.getTotalSpace();
        return new Use(total - store.getUnallocatedSpace(), total);
      }
      long total = quotaMb > 0 ? quotaMb * MIB : store.getTotalSpace();
      return new Use(walk(workspace), total);
    } catch (IOException e) {
      return Use.UNKNOWN;
    }
  }

  /**
   * The sizes of the regular files under {@code dir} added up, without following links, or {@link
   * SandboxUsage#UNMEASURED} beyond {@link #MAX_ENTRIES} entries. Entries that vanish or cannot be
   * read while walking count as nothing.
   */
  static long walk(Path dir) throws IOException {
    long[] bytes = {0};
    int[] entries = {0};
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
            return ++entries[0] > MAX_ENTRIES
                ? FileVisitResult.TERMINATE
                : FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            if (attrs.isRegularFile()) {
              bytes[0] += attrs.size();
            }
            return ++entries[0] > MAX_ENTRIES
                ? FileVisitResult.TERMINATE
                : FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) {
            return FileVisitResult.CONTINUE;
          }
        });
    return entries[0] > MAX_ENTRIES ? SandboxUsage.UNMEASURED : bytes[0];
  }
}
