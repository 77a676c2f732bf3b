package dev.box.core.session;

import dev.box.api.internal.FileTrees;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.HostCommand;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
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
 * <p>A new workspace's empty subvolume is taken from {@code store/spare/}, where a thread of the
 * store keeps {@link #SPARES} made ahead, so a session's create renames one instead of running
 * {@code btrfs}. While a spare is left, the next one is made once the server's creates and execs
 * under way are over ({@link Foreground}), so that it does not slow down the create that took one.
 * Spares outlive the server in the store and are taken again by the next one; anything else found
 * there is removed.
 *
 * <p>Every path given to {@code btrfs} is below {@code store/} and named by Box (hashed workspace
 * names, validated snapshot names, random spare names).
 */
final class BtrfsStore implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(BtrfsStore.class);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);
  private static final long GIB = 1024L * 1024 * 1024;

  /** A subvolume's root directory always has this inode number. */
  static final long SUBVOLUME_INODE = 256;

  /** How many empty subvolumes wait for the next workspaces. */
  static final int SPARES = 2;

  private static final String SPARE_AREA = "spare";
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

  private final Path root;
  private final Path image;
  private final long imageBytes;
  private final boolean dataDirOnBtrfs;
  private final @Nullable Path btrfs;
  private final @Nullable Path mkfs;
  private final @Nullable String unavailable;
  // Guarded by this.
  private boolean mounted;
  private boolean closed;
  private boolean sparesFound;
  private final ArrayDeque<Path> spares = new ArrayDeque<>();
  private final List<Path> notSpares = new ArrayList<>();
  private @Nullable Thread refill;
  private final Foreground foreground;

  /**
   * @param stateDir the state dir, which holds {@code store/} and the image
   * @param imageGib the size of the sparse image, when one is needed
   * @param foreground the server's client work, which the making of spares defers to
   */
  BtrfsStore(Path stateDir, int imageGib, Foreground foreground) {
    this.foreground = foreground;
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

  /**
   * Makes {@code dir} (in an area, absent) an empty subvolume: a spare renamed, else a new one;
   * then the spares are made up again, in the background.
   */
  void create(Path dir) throws IOException {
    try {
      if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
        throw new FileAlreadyExistsException(dir.toString());
      }
      Path spare = takeSpare();
      if (spare != null) {
        try {
          Files.move(spare, dir, StandardCopyOption.ATOMIC_MOVE);
          return;
        } catch (IOException e) {
          log.info("could not take the spare subvolume {}: {}", spare.getFileName(), e.toString());
          synchronized (this) {
            notSpares.add(spare);
          }
        }
      }
      btrfs("subvolume", "create", dir.toString());
    } finally {
      refill();
    }
  }

  /** The spares waiting now, oldest first (for tests). */
  synchronized List<Path> spares() {
    return List.copyOf(spares);
  }

  /**
   * The next spare, or null. The first call takes the spares an earlier server left: the empty
   * subvolumes in {@code store/spare/}; anything else there is removed by the refill.
   */
  private synchronized @Nullable Path takeSpare() throws IOException {
    if (closed) {
      return null;
    }
    if (!sparesFound) {
      sparesFound = true;
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(area(SPARE_AREA))) {
        for (Path entry : entries) {
          (holds(entry) && isEmpty(entry) ? spares : notSpares).add(entry);
        }
      }
    }
    return spares.poll();
  }

  private static boolean isEmpty(Path dir) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      return !entries.iterator().hasNext();
    }
  }

  /** Starts the thread that makes the spares up, unless it runs or the store is closed. */
  private synchronized void refill() {
    if (closed || refill != null || (spares.size() >= SPARES && notSpares.isEmpty())) {
      return;
    }
    refill = Thread.ofPlatform().daemon().name("box-spare-subvolumes").start(this::makeSpares);
  }

  /** Removes what is not a spare, then makes spares until there are {@link #SPARES}. */
  private void makeSpares() {
    try {
      while (true) {
        Path junk;
        Path next = null;
        synchronized (this) {
          junk = closed ? null : notSpares.isEmpty() ? null : notSpares.removeLast();
          if (junk == null) {
            if (closed || spares.size() >= SPARES) {
              refill = null;
              return;
            }
            next =
                area(SPARE_AREA).resolve(Long.toHexString(ThreadLocalRandom.current().nextLong()));
          }
        }
        if (junk != null) {
          removeNotSpare(junk);
        } else if (next != null && !Files.exists(next, LinkOption.NOFOLLOW_LINKS)) {
          // While a spare is left, the create that took one is served first.
          foreground.awaitQuiet(this::makeNow);
          synchronized (this) {
            if (closed) {
              refill = null;
              return;
            }
          }
          btrfs("subvolume", "create", next.toString());
          synchronized (this) {
            spares.add(next);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      log.warn(
          "cannot make spare subvolumes; workspaces are made as they are asked for: {}",
          e.toString());
      synchronized (this) {
        refill = null;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      synchronized (this) {
        refill = null;
      }
    }
  }

  /** Whether a spare must be made now: none is left, or the store closes. */
  private synchronized boolean makeNow() {
    return spares.isEmpty() || closed;
  }

  private void removeNotSpare(Path entry) throws IOException {
    log.info("removing {} from the spare subvolumes", entry.getFileName());
    if (holds(entry)) {
      delete(entry);
    } else {
      FileTrees.deleteTree(entry);
    }
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

  /**
   * Stops making spares, then unmounts the image, lazily when a sandbox still holds it; the image
   * and its data, spares included, stay.
   */
  @Override
  public void close() {
    Thread making;
    synchronized (this) {
      closed = true;
      making = refill;
    }
    if (making != null) {
      try {
        making.join(CLOSE_WAIT);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    unmount();
  }

  private synchronized void unmount() {
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
