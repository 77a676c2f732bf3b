package dev.box.agenthost;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The reference's workspace quota check, done by the agent host around an exec: it adds up the
 * sizes of the files and symlinks under a host workspace (without following links) and refuses when
 * they exceed the quota or the tree holds too many entries.
 *
 * <p><b>Advisory.</b> It is checked only when the workspace is a host directory this JVM can see,
 * before and after an exec, so a command can exceed it while it runs (the check is racy by nature).
 * The quota the server enforces is its own: a session's private workspace is a file system of
 * {@code workspace_quota_mb}, which no command can outgrow.
 *
 * @param maxEntries the most entries a scan walks before it refuses (the reference's 100,000)
 */
public record AdvisoryWorkspaceQuota(int maxEntries) {
  /** The reference's default entry limit. */
  public static final int DEFAULT_MAX_ENTRIES = 100_000;

  /** Clamps {@code maxEntries} to 1..1,000,000, as the reference does. */
  public AdvisoryWorkspaceQuota {
    maxEntries = Math.clamp(maxEntries, 1, 1_000_000);
  }

  /**
   * Checks the workspace {@code hostPath} against {@code quotaMb} (0 = none); does nothing when the
   * quota is 0 or the directory is not visible here.
   *
   * @param phase {@code before execution} or {@code after execution}, for the message
   * @throws BoxValidationException with the reference's message when the quota or the entry limit
   *     is exceeded
   */
  public void check(Path hostPath, int quotaMb, String phase, String sessionId) {
    if (quotaMb <= 0 || !Files.isDirectory(hostPath)) {
      return;
    }
    long limit = quotaMb * 1024L * 1024L;
    long[] used = {0};
    int[] entries = {0};
    boolean[] tooMany = {false};
    try {
      Files.walkFileTree(
          hostPath,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
              return dir.equals(hostPath) ? FileVisitResult.CONTINUE : count(0);
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              return count(attrs.isRegularFile() || attrs.isSymbolicLink() ? attrs.size() : 0);
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              return FileVisitResult.CONTINUE; // Gone or unreadable: the reference skips it too.
            }

            private FileVisitResult count(long size) {
              used[0] += size;
              if (++entries[0] > maxEntries) {
                tooMany[0] = true;
                return FileVisitResult.TERMINATE;
              }
              return used[0] > limit ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String where = " host_path=" + hostPath + " session_id=" + sessionId;
    if (tooMany[0]) {
      throw new BoxValidationException(
          "workspace entry limit exceeded " + phase + ": entries>" + maxEntries + where);
    }
    if (used[0] > limit) {
      throw new BoxValidationException(
          "workspace quota exceeded "
              + phase
              + ": used="
              + used[0]
              + " bytes limit="
              + limit
              + " bytes entries="
              + entries[0]
              + where);
    }
  }
}
