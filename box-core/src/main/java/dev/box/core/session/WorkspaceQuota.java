package dev.box.core.session;

import dev.box.api.BoxValidationException;
import dev.box.core.backend.HostCommand;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds a private workspace by the kernel: the workspace directory is the mount point of an ext4
 * file system of {@code workspace_quota_mb} MiB in an image file of its own, so a sandbox that
 * writes more gets {@code ENOSPC}, and the inodes are bounded too. The image lives beside the
 * workspaces in the state dir, sparse until written, and goes with the workspace (a persistent
 * one's stays, and is mounted again when the session is restored).
 *
 * <p>Mounting takes root; a server that is not root refuses a quota it cannot enforce.
 */
final class WorkspaceQuota {
  private static final Logger log = LoggerFactory.getLogger(WorkspaceQuota.class);
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
  private static final long MIB = 1024 * 1024;

  private final Path images;
  private final @Nullable Path mkfs;
  private final @Nullable String unavailable;

  WorkspaceQuota(Path stateDir) {
    this.images = stateDir.resolve("workspace-images");
    this.mkfs = HostCommand.find("mkfs.ext4");
    this.unavailable = whyUnavailable(mkfs);
  }

  private static @Nullable String whyUnavailable(@Nullable Path mkfs) {
    return whyNoImage(mkfs, "mkfs.ext4", "e2fsprogs");
  }

  /**
   * Why this server cannot make and loop-mount a file system image with {@code mkfs} (the program
   * {@code program}, of the Debian package {@code debianPackage}), or null when it can.
   */
  static @Nullable String whyNoImage(@Nullable Path mkfs, String program, String debianPackage) {
    if (!"root".equals(System.getProperty("user.name"))) {
      return "mounting a file system image needs a server running as root";
    }
    if (mkfs == null) {
      return program + " is not installed (Debian: " + debianPackage + ")";
    }
    if (!Files.exists(Path.of("/dev/loop-control"))) {
      return "the kernel offers no loop devices (/dev/loop-control)";
    }
    return null;
  }

  /** Why quotas cannot be enforced here, or null when they can. */
  @Nullable String unavailable() {
    return unavailable;
  }

  /**
   * Makes {@code dir} (an empty or restored private workspace named {@code name}) a file system of
   * {@code megabytes} MiB; one that is mounted already is left as it is.
   *
   * @throws BoxValidationException when quotas cannot be enforced on this host
   * @throws IOException when the image cannot be made or mounted
   */
  void apply(Path dir, String name, int megabytes) throws IOException {
    String why = unavailable;
    Path mkfsPath = mkfs;
    if (why != null || mkfsPath == null) {
      throw new BoxValidationException(
          "workspace_quota_mb cannot be enforced on this host: " + why);
    }
    if (isMountPoint(dir)) {
      return;
    }
    Files.createDirectories(images);
    Path image = imageOf(name);
    if (!Files.exists(image, LinkOption.NOFOLLOW_LINKS)) {
      try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
        file.setLength(megabytes * MIB);
      }
      // No journal and no reserved blocks: every MiB of the quota is the sandbox's.
      HostCommand.run(
          List.of(
              mkfsPath.toString(),
              "-q",
              "-F",
              "-m",
              "0",
              "-O",
              "^has_journal",
              "-E",
              "nodiscard",
              image.toString()),
          "",
          COMMAND_TIMEOUT);
    }
    HostCommand.run(
        List.of("mount", "-o", "loop,nosuid,nodev", image.toString(), dir.toString()),
        "",
        COMMAND_TIMEOUT);
    Files.deleteIfExists(dir.resolve("lost+found"));
  }

  /**
   * Unmounts {@code dir} when it is a workspace file system and removes the image of {@code name}.
   */
  void remove(Path dir, String name) {
    try {
      if (isMountPoint(dir)) {
        HostCommand.run(List.of("umount", dir.toString()), "", COMMAND_TIMEOUT);
      }
      Files.deleteIfExists(imageOf(name));
    } catch (IOException e) {
      log.warn("could not remove the file system of workspace {}: {}", name, e.toString());
    }
  }

  /** Removes the images whose workspace is gone (a crash between unmount and delete). */
  void removeOrphanImages(Path workspaces) {
    if (!Files.isDirectory(images)) {
      return;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(images, "*.img")) {
      for (Path image : entries) {
        String name = image.getFileName().toString();
        if (!Files.isDirectory(workspaces.resolve(name.substring(0, name.length() - 4)))) {
          Files.deleteIfExists(image);
        }
      }
    } catch (IOException e) {
      log.warn("could not sweep workspace images: {}", e.toString());
    }
  }

  private Path imageOf(String name) {
    return images.resolve(name + ".img");
  }

  /**
   * Whether {@code dir} is a workspace's mount point: on another device than its parent, and not a
   * btrfs subvolume (which has a device of its own too, and is the root of none of Box's mounts).
   */
  static boolean isMountPoint(Path dir) throws IOException {
    return onOtherDevice(dir)
        && !Long.valueOf(BtrfsStore.SUBVOLUME_INODE)
            .equals(Files.getAttribute(dir, "unix:ino", LinkOption.NOFOLLOW_LINKS));
  }

  /** Whether {@code dir} is a directory on another device than its parent. */
  static boolean onOtherDevice(Path dir) throws IOException {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    Object mine = Files.getAttribute(dir, "unix:dev", LinkOption.NOFOLLOW_LINKS);
    Object parents = Files.getAttribute(dir.getParent(), "unix:dev", LinkOption.NOFOLLOW_LINKS);
    return !mine.equals(parents);
  }
}
