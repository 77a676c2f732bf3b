package dev.box.backend.microvm;

import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What the guest's init needs of a root file system, checked on an image's unpacked tree before it
 * becomes a root disk, so that an image lacking it is refused with its reason rather than booted to
 * a VM whose agent never says hello: {@code /bin/sh}, an executable file, which starts every
 * process of the session; {@code /etc}, a directory (the init writes {@code /etc/resolv.conf} there
 * with the network on); and each directory the init mounts on or makes before it enters the root
 * ({@code /dev}, {@code /proc}, {@code /sys}, {@code /run}, {@code /.box}, {@code /workspace}) is a
 * directory or absent, never a link, which the init, still outside the root, would follow into its
 * own file system. Links are resolved as the guest would, inside the tree; nothing is followed on
 * the host.
 */
final class GuestRootCheck {
  /** Where the init mounts or makes a directory before it enters the root. */
  static final List<String> MOUNT_POINTS =
      List.of("dev", "proc", "sys", "run", ".box", "workspace");

  /** As the kernel's limit on links followed in one lookup. */
  private static final int MAX_LINKS = 40;

  private GuestRootCheck() {}

  /**
   * Checks the tree {@code root}, unpacked from {@code image}.
   *
   * @throws BoxValidationException naming the image and what it lacks
   */
  static void check(Path root, String image) throws IOException {
    for (String name : MOUNT_POINTS) {
      PosixFileAttributes attributes = attributes(root.resolve(name));
      if (attributes != null && !attributes.isDirectory()) {
        throw refused(image, "/" + name + " is not a directory, and the VM's init mounts there");
      }
    }
    PosixFileAttributes etc = resolve(root, "etc");
    if (etc == null || !etc.isDirectory()) {
      throw refused(image, "it has no directory /etc");
    }
    PosixFileAttributes shell = resolve(root, "bin/sh");
    if (shell == null || !shell.isRegularFile() || !executable(shell)) {
      throw refused(image, "it has no executable /bin/sh, which starts every process");
    }
  }

  private static boolean executable(PosixFileAttributes attributes) {
    return attributes.permissions().stream().anyMatch(p -> p.name().endsWith("_EXECUTE"));
  }

  private static BoxValidationException refused(String image, String why) {
    return new BoxValidationException("image " + image + " cannot be a micro-VM's root: " + why);
  }

  /**
   * What {@code path} (relative to the tree's root) names once its links are resolved inside the
   * tree, as in a chroot; null when nothing does or the links loop.
   */
  static @Nullable PosixFileAttributes resolve(Path root, String path) throws IOException {
    Deque<String> left = new ArrayDeque<>(List.of(path.split("/")));
    Deque<String> at = new ArrayDeque<>();
    int links = 0;
    while (!left.isEmpty()) {
      String part = left.pollFirst();
      if (part.isEmpty() || part.equals(".")) {
        continue;
      }
      if (part.equals("..")) {
        at.pollLast();
        continue;
      }
      Path here = root.resolve(String.join("/", at)).resolve(part);
      PosixFileAttributes attributes = attributes(here);
      if (attributes == null) {
        return null;
      }
      if (!attributes.isSymbolicLink()) {
        at.addLast(part);
        if (left.isEmpty()) {
          return attributes;
        }
        continue;
      }
      if (++links > MAX_LINKS) {
        return null;
      }
      String target = Files.readSymbolicLink(here).toString();
      if (target.startsWith("/")) {
        at.clear();
      }
      String[] parts = target.split("/");
      for (int i = parts.length - 1; i >= 0; i--) {
        left.addFirst(parts[i]);
      }
    }
    return attributes(root.resolve(String.join("/", at)));
  }

  private static @Nullable PosixFileAttributes attributes(Path path) throws IOException {
    try {
      return Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      return null;
    }
  }
}
