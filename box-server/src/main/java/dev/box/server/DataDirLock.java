package dev.box.server;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock that keeps a data directory to one server, in this JVM or another: an exclusive lock on
 * {@code box.lock} in its state directory, held from start to close.
 */
final class DataDirLock implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DataDirLock.class);

  private final FileLock lock;

  private DataDirLock(FileLock lock) {
    this.lock = lock;
  }

  /**
   * Takes the lock of the data directory {@code dataDir}, whose state directory is {@code state}.
   *
   * @throws IllegalStateException when another server holds it
   */
  static DataDirLock open(Path state, Path dataDir) throws IOException {
    FileChannel channel =
        FileChannel.open(
            state.resolve("box.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = tryLock(channel);
    } catch (IOException | RuntimeException e) {
      closeQuietly(channel);
      throw e;
    }
    if (lock == null) {
      closeQuietly(channel);
      throw new IllegalStateException("data dir " + dataDir + " is in use by another Box server");
    }
    return new DataDirLock(lock);
  }

  private static @Nullable FileLock tryLock(FileChannel channel) throws IOException {
    try {
      return channel.tryLock();
    } catch (OverlappingFileLockException e) {
      return null; // held by another server in this JVM
    }
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      log.debug("releasing the data dir lock failed", e);
    }
  }

  /** Releases the lock; a failure is only logged, since the server stops either way. */
  @Override
  public void close() {
    try {
      lock.release();
      lock.channel().close();
    } catch (IOException e) {
      log.debug("releasing the data dir lock failed", e);
    }
  }
}
