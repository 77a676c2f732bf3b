package dev.box.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The files a server keeps in its state directory, written whole or not at all: to a temporary file
 * beside the target (mode 0600 from its creation, so never readable by others), flushed to disk,
 * renamed over the old file, and the directory flushed, so that a crash at any instant leaves
 * either the old content or the new one.
 */
public final class StateFiles {
  private StateFiles() {}

  /**
   * Replaces {@code file}'s content with {@code bytes}, creating its directory when missing.
   *
   * @throws IOException when it cannot be written; the old content is then left as it was
   */
  public static void replace(Path file, byte[] bytes) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    if (dir == null) {
      throw new IOException(file + " has no directory");
    }
    Files.createDirectories(dir);
    Path temp = dir.resolve("." + file.getFileName() + ".tmp");
    Files.deleteIfExists(temp);
    try (FileChannel out =
        FileChannel.open(
            temp,
            Set.of(
                StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        out.write(buffer);
      }
      out.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    syncDirectory(dir);
  }

  /** Flushes {@code dir}'s entries to disk (a rename or a removal in it). */
  public static void syncDirectory(Path dir) throws IOException {
    try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
      directory.force(true);
    }
  }
}
