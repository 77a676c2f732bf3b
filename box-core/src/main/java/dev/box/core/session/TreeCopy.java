package dev.box.core.session;

import dev.box.core.backend.HostCommand;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Copies a workspace's tree where no subvolume snapshot can: {@code cp -a --reflink=auto}, which
 * keeps modes, owners, times and links as they are (a symbolic link is copied as a link, never
 * followed out of the tree), and shares the blocks when the file system can (btrfs, XFS).
 */
final class TreeCopy {
  /** A copy of a large workspace is slow, but it is bounded. */
  private static final Duration TIMEOUT = Duration.ofMinutes(30);

  private TreeCopy() {}

  /** Copies what {@code source} holds into the existing directory {@code target}. */
  static void copy(Path source, Path target) throws IOException {
    HostCommand.run(
        List.of(
            "cp",
            "-a",
            "--reflink=auto",
            "--no-target-directory",
            source.toString(),
            target.toString()),
        "",
        TIMEOUT);
  }
}
