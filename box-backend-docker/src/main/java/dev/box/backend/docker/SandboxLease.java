package dev.box.backend.docker;

import dev.box.api.internal.ShellScript;
import dev.box.core.backend.SandboxMount;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a server's containers when the server is gone, whether or not any server comes back: the
 * server beats a counter into a file of its state dir, every container sees that file read-only,
 * and the process that keeps a container running exits once the counter has not moved for the
 * lease, which stops the container and everything in it. Unlike bubblewrap sandboxes, which die
 * with their server, a container would otherwise run on after a {@code kill -9} of the server until
 * the next start of the same data dir, which may never come.
 *
 * <p>The counter is rewritten in place, never renamed over, so that the container's bind mount of
 * the file keeps seeing it. The watch needs nothing of the image but a POSIX shell and {@code
 * sleep}, which the holder used before it did too.
 */
final class SandboxLease implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SandboxLease.class);

  /** Where a container sees the counter. */
  static final String SANDBOX_PATH = "/.box/lease";

  private static final String HOLDER = ShellScript.load(SandboxLease.class, "lease-holder.sh");

  private final Path file;
  private final Duration lease;
  private final Duration interval;
  private final ThreadFactory threads;
  private @Nullable Thread beat;
  private long counter;

  /**
   * @param stateDir the server's state dir, which holds the counter
   * @param lease how long a container outlives the last beat
   * @param threads makes the thread that beats
   */
  SandboxLease(Path stateDir, Duration lease, ThreadFactory threads) {
    this.threads = threads;
    this.file = stateDir.toAbsolutePath().normalize().resolve("sandbox-lease");
    this.lease = lease;
    this.interval = Duration.ofSeconds(Math.max(1, lease.toSeconds() / 6));
  }

  /** The read-only mount of the counter into a container. */
  SandboxMount mount() {
    return new SandboxMount(file, SANDBOX_PATH, true);
  }

  /**
   * The command that keeps a container running while its server beats: it reads the counter every
   * interval and exits when it has not changed for the lease (a missing file counts as no beat).
   * Words added after it are a command it runs beside the watch, again whenever it ends ({@link
   * ContainerAgent#holder}).
   */
  List<String> holder() {
    long misses = Math.max(2, lease.toSeconds() / interval.toSeconds());
    return List.of(
        "/bin/sh",
        "-c",
        HOLDER,
        "box-lease",
        SANDBOX_PATH,
        Long.toString(interval.toSeconds()),
        Long.toString(misses));
  }

  /** Beats once now and then every interval, until {@link #close()}; idempotent. */
  synchronized void start() throws IOException {
    if (beat != null) {
      return;
    }
    write();
    Thread thread =
        threads.newThread(
            () -> {
              try {
                while (!Thread.currentThread().isInterrupted()) {
                  Thread.sleep(interval);
                  write();
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (IOException e) {
                if (!Thread.currentThread().isInterrupted()) {
                  log.error(
                      "cannot beat the sandbox lease {}; containers end within {}", file, lease, e);
                }
              }
            });
    beat = thread;
    thread.start();
  }

  private synchronized void write() throws IOException {
    counter++;
    try (FileChannel out =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING,
            LinkOption.NOFOLLOW_LINKS)) {
      out.write(ByteBuffer.wrap((counter + "\n").getBytes(StandardCharsets.US_ASCII)));
    }
  }

  /** Stops beating: the containers end within the lease unless another beat starts. */
  @Override
  public synchronized void close() {
    Thread thread = beat;
    beat = null;
    if (thread != null) {
      thread.interrupt();
    }
  }
}
