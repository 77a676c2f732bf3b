package dev.box.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Process cgroups that ended empty, kept for the next processes: making and removing one for each
 * exec costs two directory operations of the cgroup file system. As many as there were processes at
 * once, at most; their owner removes them at its teardown.
 */
public final class EmptyCgroups {
  private final Deque<Path> dirs = new ArrayDeque<>();

  /**
   * Whether the process list of the cgroup {@code dir} reads empty; one that cannot be read is not
   * empty, so it is not reused.
   */
  public static boolean provablyEmpty(Path dir) {
    try {
      return Files.readString(dir.resolve("cgroup.procs"), StandardCharsets.US_ASCII).isBlank();
    } catch (IOException e) {
      return false;
    }
  }

  /** A kept cgroup, or null; one removed meanwhile is passed over. */
  public synchronized @Nullable Path take() {
    Path dir;
    while ((dir = dirs.poll()) != null) {
      if (Files.isDirectory(dir)) {
        return dir;
      }
    }
    return null;
  }

  /** Keeps {@code dir}, which is empty, for the next process. */
  public synchronized void keep(Path dir) {
    dirs.push(dir);
  }

  /** Every kept cgroup, no longer kept: for the owner to remove. */
  public synchronized List<Path> takeAll() {
    List<Path> all = new ArrayList<>(dirs);
    dirs.clear();
    return all;
  }
}
