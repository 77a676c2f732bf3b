package dev.box.guard;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The host's binder of workspaces into pre-started sandboxes: one long-lived {@code box-mounter}
 * ({@code src/main/c/box-mounter.c}) that makes the mounts a {@code mount(8)} command line made
 * before, without a shell and two processes per request (about 3 ms of each pooled session's
 * start).
 *
 * <p>It runs as the server's user in the server's mount namespace and takes requests only on its
 * stdin, which only the server holds. Each request has a deadline ({@link #DEADLINE}): a mounter
 * that does not answer in time is killed, and so is one that answers with anything but its
 * five-byte answer. A mounter that failed is not used again: the caller falls back to the commands.
 */
public final class HostMounter implements AutoCloseable {
  private static final String NAME = "box-mounter";
  private static final Duration DEADLINE = Duration.ofSeconds(10);
  private static final int MAX_PATH = 4096;

  private final Process process;
  private final OutputStream requests;
  private final DataInputStream answers;
  private boolean broken;

  private HostMounter(Process process) {
    this.process = process;
    this.requests = process.getOutputStream();
    this.answers = new DataInputStream(process.getInputStream());
  }

  /**
   * Installs {@code box-mounter} in {@code <dataDir>/bin} and starts it.
   *
   * @throws IOException when this build has none for this arch, or it cannot be installed or
   *     started
   */
  public static HostMounter start(Path dataDir) throws IOException {
    Path target = dataDir.toAbsolutePath().normalize().resolve("bin").resolve(NAME);
    byte[] bytes = HelperBinaries.bytes(NAME);
    if (bytes == null) {
      throw new IOException(
          "no box-mounter for this arch (" + System.getProperty("os.arch") + ") in this build");
    }
    HelperBinaries.install(target, bytes);
    ProcessBuilder builder = new ProcessBuilder(target.toString());
    builder.environment().clear();
    builder.redirectError(ProcessBuilder.Redirect.DISCARD);
    builder.directory(Path.of("/").toFile());
    return new HostMounter(builder.start());
  }

  /** Whether requests can still be sent (it has not failed or been closed). */
  public synchronized boolean usable() {
    return !broken && process.isAlive();
  }

  /**
   * {@code mount --rbind -o nosuid,nodev source stage && mount --move stage slot}: binds {@code
   * source} (recursively) at {@code stage} with {@code nosuid,nodev}, then moves it onto {@code
   * slot} (a failure after the bind detaches it again).
   *
   * @throws IOException with the failed step and its error, or when the mounter failed (then it is
   *     not used again)
   */
  public void bind(Path source, Path stage, Path slot) throws IOException {
    request('B', source, stage, slot);
  }

  /**
   * Binds {@code source} (recursively, {@code nosuid,nodev}) at {@code target} inside the mount
   * namespace of the running process {@code pid} (a sandbox's init), where {@code target} resolves
   * as that process sees it. The bind is made in the host's namespace and moved into the sandbox's
   * by a child of the mounter that joins it; the mounter itself never leaves the host's.
   *
   * @throws IOException with the failed step and its error
   */
  public void join(Path source, long pid, String target) throws IOException {
    join(source, Path.of("/proc", Long.toString(pid), "ns", "mnt"), target);
  }

  /** {@link #join(Path, long, String)} into the namespace {@code namespace} names. */
  void join(Path source, Path namespace, String target) throws IOException {
    request('J', source, namespace, Path.of(target));
  }

  /**
   * Attaches at {@code target} an idmapped recursive bind of the directory {@code folder} ({@code
   * nosuid,nodev}, and read-only when asked): through it the folder's owner is the sandbox user
   * ({@code sandboxUid}, its group {@code sandboxGid}), and what the sandbox user creates lands on
   * disk as the owner's uid and gid. The folder is opened without following a symbolic link, and
   * mounted only when it is still the one {@code folder} describes.
   *
   * @throws IOException with the failed step and its error: {@code ESTALE} when the folder changed
   *     since it was checked, {@code EINVAL} or {@code EPERM} at step {@code idmap} when its file
   *     system takes no idmapped mount
   */
  public void idmap(IdmappedFolder folder, Path target, int sandboxUid, int sandboxGid)
      throws IOException {
    ByteBuffer ids = ByteBuffer.allocate(36).order(ByteOrder.LITTLE_ENDIAN);
    ids.putInt(folder.ownerUid()).putInt(folder.ownerGid()).putInt(sandboxUid).putInt(sandboxGid);
    ids.putLong(folder.device()).putLong(folder.inode()).putInt(folder.readOnly() ? 1 : 0);
    request('I', ids.array(), folder.path(), target);
  }

  /** {@code umount --lazy point}. */
  public void detach(Path point) throws IOException {
    request('D', point);
  }

  private void request(char op, Path... paths) throws IOException {
    request(op, new byte[0], paths);
  }

  private synchronized void request(char op, byte[] tail, Path... paths) throws IOException {
    if (!usable()) {
      throw new IOException("box-mounter is not running");
    }
    ByteBuffer request = ByteBuffer.allocate(1 + paths.length * (4 + MAX_PATH) + tail.length);
    request.order(ByteOrder.LITTLE_ENDIAN).put((byte) op);
    for (Path path : paths) {
      byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
      if (!path.isAbsolute() || bytes.length == 0 || bytes.length > MAX_PATH) {
        throw new IOException("not a path box-mounter takes: " + path);
      }
      for (byte b : bytes) {
        if (b == 0) {
          throw new IOException("not a path box-mounter takes: " + path);
        }
      }
      request.putInt(bytes.length).put(bytes);
    }
    request.put(tail);
    // The watchdog kills a mounter that does not answer in time: the read below then ends. Once
    // cancelled, the future's task is skipped when its delay is over.
    CompletableFuture<Void> watchdog =
        CompletableFuture.runAsync(process::destroyForcibly, afterDeadline());
    int error;
    int step;
    try {
      requests.write(request.array(), 0, request.position());
      requests.flush();
      byte[] answer = new byte[5];
      answers.readFully(answer);
      error = ByteBuffer.wrap(answer, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      step = answer[4];
    } catch (EOFException e) {
      broken = true;
      process.destroyForcibly();
      throw new IOException("box-mounter ended without an answer", e);
    } catch (IOException e) {
      broken = true;
      process.destroyForcibly();
      throw e;
    } finally {
      watchdog.cancel(false);
    }
    if (error != 0) {
      throw new IOException(
          STEPS[Math.min(Math.max(step, 0), STEPS.length - 1)]
              + " failed: error "
              + error
              + " ("
              + describe(error)
              + ")");
    }
  }

  private static final String[] STEPS = {
    "mount",
    "bind",
    "remount",
    "move",
    "detach",
    "clone",
    "flags",
    "join",
    "attach",
    "check",
    "user namespace",
    "idmap"
  };

  private static Executor afterDeadline() {
    return CompletableFuture.delayedExecutor(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
  }

  private static String describe(int errno) {
    return switch (errno) {
      case 1 -> "EPERM";
      case 2 -> "ENOENT";
      case 13 -> "EACCES";
      case 16 -> "EBUSY";
      case 20 -> "ENOTDIR";
      case 22 -> "EINVAL";
      case 95 -> "EOPNOTSUPP";
      case 116 -> "ESTALE";
      default -> "errno " + errno;
    };
  }

  /** Ends the mounter: it exits at the end of its input, and is killed if it does not. */
  @Override
  public synchronized void close() {
    broken = true;
    try {
      requests.close();
    } catch (IOException e) {
      // It is going anyway.
    }
    try {
      if (!process.waitFor(2, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    closeQuietly(answers);
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException e) {
      // Nothing to do.
    }
  }
}
