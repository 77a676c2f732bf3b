package dev.box.core.session;

import dev.box.core.backend.HostCommand;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A btrfs file system in the state dir whose subvolumes are private workspaces and snapshots, so
 * that a fork or a snapshot is a subvolume snapshot: it takes a few milliseconds and shares every
 * block until one side writes it.
 *
 * <p>When the state dir is on btrfs, {@code store/} is a plain directory of it. Otherwise, on a
 * server that is root with loop devices and {@code mkfs.btrfs}, {@code store/} is the mount point
 * ({@code nosuid,nodev}) of a sparse image {@code workspace-store.img}, made at the first need and
 * kept across restarts; it is unmounted by {@link #close()}, or mounted again as it is after a
 * crash. Where neither is possible, {@link #unavailable()} says why and the callers copy.
 *
 * <p>Every path given to {@code btrfs} is below {@code store/} and named by Box (hashed workspace
 * names, validated snapshot names).
 */
final class BtrfsStore implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BtrfsStore.class);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
  private static final long GIB = 1024L * 1024 * 1024;

  /** A subvolume's root directory always has this inode number. */
  static final long SUBVOLUME_INODE = 256;

  private final Path root;
  private final Path image;
  private final long imageBytes;
  private final boolean dataDirOnBtrfs;
  private final @Nullable Path btrfs;
  private final @Nullable Path mkfs;
  private final @Nullable String unavailable;
  private boolean mounted;

  /**
   * @param stateDir the state dir, which holds {@code store/} and the image
   * @param imageGib the size of the sparse image, when one is needed
   */
  BtrfsStore(Path stateDir, int imageGib) {
    this.root = stateDir.resolve("store");
    this.image = stateDir.resolve("workspace-store.img");
    this.imageBytes = imageGib * GIB;
    this.btrfs = HostCommand.find("btrfs");
    this.mkfs = HostCommand.find("mkfs.btrfs");
    this.dataDirOnBtrfs = onBtrfs(stateDir);
    this.unavailable = whyUnavailable();
  }

  private static boolean onBtrfs(Path dir) {
    try {
      return "btrfs".equals(Files.getFileStore(dir).type());
    } catch (IOException e) {
      return false;
    }
  }

  private @Nullable String whyUnavailable() {
    if (btrfs == null) {
      return "btrfs is not installed (Debian: btrfs-progs)";
    }
    if (dataDirOnBtrfs) {
      return null;
    }
    String why = WorkspaceQuota.whyNoImage(mkfs, "mkfs.btrfs", "btrfs-progs");
    return why == null ? null : "the data dir is not on btrfs, and " + why;
  }

  /** Why no btrfs store can be had here, or null when it can. */
  @Nullable String unavailable() {
    return unavailable;
  }

  /** How forks and snapshots are made, as {@code /v1/health} reports it. */
  String describe() {
    if (unavailable != null) {
      return "full copy: " + unavailable;
    }
    return dataDirOnBtrfs
        ? "copy-on-write (btrfs subvolumes of the data dir)"
        : "copy-on-write (btrfs subvolumes in a sparse image)";
  }

  /**
   * The directory {@code area} ({@code workspaces}, {@code snapshots}) of the store, mounting the
   * store first when needed.
   *
   * @throws IOException when the store is unavailable or cannot be mounted
   */
  synchronized Path area(String area) throws IOException {
    if (unavailable != null) {
      throw new IOException("no btrfs store: " + unavailable);
    }
    if (!dataDirOnBtrfs && !mounted) {
      mount();
    }
    Path dir = root.resolve(area);
    Files.createDirectories(dir);
    return dir;
  }

  /** The directory {@code area} when the store exists already (mounted if needed), else null. */
  synchronized @Nullable Path existingArea(String area) throws IOException {
    if (unavailable != null
        || (dataDirOnBtrfs
            ? !Files.isDirectory(root)
            : !Files.exists(image, LinkOption.NOFOLLOW_LINKS))) {
      return null;
    }
    return area(area);
  }

  private void mount() throws IOException {
    Files.createDirectories(root);
    if (WorkspaceQuota.onOtherDevice(root)) {
      mounted = true;
      return;
    }
    Path mkfsPath = mkfs;
    if (!Files.exists(image, LinkOption.NOFOLLOW_LINKS) && mkfsPath != null) {
      try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
        file.setLength(imageBytes);
      }
      HostCommand.run(List.of(mkfsPath.toString(), "-q", image.toString()), "", COMMAND_TIMEOUT);
    }
    HostCommand.run(
        List.of("mount", "-o", "loop,nosuid,nodev", image.toString(), root.toString()),
        "",
        COMMAND_TIMEOUT);
    mounted = true;
    log.info("mounted the workspace store {} on {}", image.getFileName(), root);
  }

  /** Whether {@code dir} is a subvolume of this store. */
  boolean holds(Path dir) {
    try {
      return unavailable == null
          && dir.startsWith(root)
          && Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
          && Long.valueOf(SUBVOLUME_INODE)
              .equals(Files.getAttribute(dir, "unix:ino", LinkOption.NOFOLLOW_LINKS));
    } catch (IOException e) {
      return false;
    }
  }

  /** Makes {@code dir} (in an area, absent) an empty subvolume. */
  void create(Path dir) throws IOException {
    btrfs("subvolume", "create", dir.toString());
  }

  /** Makes {@code target} (absent) a snapshot of the subvolume {@code source}. */
  void snapshot(Path source, Path target, boolean readOnly) throws IOException {
    if (readOnly) {
      btrfs("subvolume", "snapshot", "-r", source.toString(), target.toString());
    } else {
      btrfs("subvolume", "snapshot", source.toString(), target.toString());
    }
  }

  /** Marks the subvolume {@code dir} read-only. */
  void makeReadOnly(Path dir) throws IOException {
    btrfs("property", "set", "-ts", dir.toString(), "ro", "true");
  }

  /** Deletes the subvolume {@code dir} with everything in it. */
  void delete(Path dir) throws IOException {
    btrfs("subvolume", "delete", dir.toString());
  }

  private void btrfs(String... args) throws IOException {
    Path program = btrfs;
    if (program == null) {
      throw new IOException("btrfs is not installed");
    }
    List<String> argv = new java.util.ArrayList<>();
    argv.add(program.toString());
    argv.addAll(List.of(args));
    HostCommand.run(argv, "", COMMAND_TIMEOUT);
  }

  /** Unmounts the image, lazily when a sandbox still holds it; the image and its data stay. */
  @Override
  public synchronized void close() {
    if (!mounted) {
      return;
    }
    mounted = false;
    try {
      HostCommand.run(List.of("umount", root.toString()), "", COMMAND_TIMEOUT);
    } catch (IOException e) {
      try {
        HostCommand.run(List.of("umount", "-l", root.toString()), "", COMMAND_TIMEOUT);
      } catch (IOException again) {
        log.warn("could not unmount the workspace store: {}", again.toString());
      }
    }
  }
}
