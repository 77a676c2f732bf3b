package dev.box.backend.microvm;

import dev.box.core.Hashes;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channel;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The saved state of a template VM, from which the pool's VMs start instead of booting: one file in
 * {@code <state>/microvm/saved/}, named by a hash of what it depends on ({@link #key}: QEMU, the
 * kernel, the root image, the initramfs, the pooled VM's memory and vCPUs and the acceleration),
 * root's alone (mode 0600: it holds the template's memory), written under a temporary name and
 * renamed.
 *
 * <p>A template boots with {@code box.template} ({@link QemuCommand.Start#TEMPLATE}), its config
 * disk all zeros: its init does what every VM does alike and says so on the go port, where it
 * waits. The server then stops it and migrates it, through QMP, to a socket it listens on in the
 * template's directory, into the file. A pooled VM is QEMU with the same devices reading that file
 * as its stdin ({@link QemuCommand.Start#RESTORE}); once the state is in, the server resumes it and
 * sends the go: the host's time and fresh random bytes, which every restored VM needs of its own
 * ({@code box-vminit.c}), and the guest reads its own config disk only then.
 *
 * <p>A template that cannot be made, or a restore that fails, is reported in {@link #status}, the
 * file discarded, and the pool boots its VMs for the rest of the server's life.
 */
final class VmState {
  private static final Logger log = LoggerFactory.getLogger(VmState.class);

  /** The socket the server listens on, in a template's directory, for its migration stream. */
  static final String SAVE_SOCKET = Vm.SOCKETS + "/save.sock";

  /** How the go starts; box-vminit checks it. */
  private static final byte[] GO_MAGIC = "BOXGO001".getBytes(StandardCharsets.US_ASCII);

  /** Random bytes in a go: box-vminit's GO_RANDOM. */
  static final int GO_RANDOM = 64;

  private static final String SUFFIX = ".vmstate";

  /** What changes the saved state's format: a new value makes every kept file stale. */
  private static final String FORMAT = "box-vmstate 3";

  private static final Duration QMP_CALL = Duration.ofSeconds(30);

  /** How long a VM waits for another's template: its boot, its save and room to spare. */
  private static final Duration MAKING = Duration.ofMinutes(5);

  /** Makes the template and saves it into a file. */
  interface Maker {
    void make(Path into) throws IOException, InterruptedException;
  }

  private final Path file;
  private final int sandboxUid;
  private final ScheduledExecutorService timers;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();
  private final AtomicInteger restored = new AtomicInteger();
  private final AtomicInteger templates = new AtomicInteger();
  private volatile String note;
  private @Nullable CompletableFuture<Boolean> making;
  private volatile long lastRestoreMs = -1;
  private boolean disabled;

  /**
   * @param dir the directory of the saved states; kept files of other keys are removed
   * @param key what the state depends on ({@link #key})
   * @param sandboxUid the uid QEMU runs as, which must reach the save socket
   */
  VmState(Path dir, String key, int sandboxUid, ScheduledExecutorService timers, Clock clock)
      throws IOException {
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    this.file = dir.resolve(Hashes.shortSha256(key) + SUFFIX);
    this.sandboxUid = sandboxUid;
    this.timers = timers;
    this.clock = clock;
    try (Stream<Path> kept = Files.list(dir)) {
      for (Path other : kept.toList()) {
        if (!other.equals(file)) {
          Files.deleteIfExists(other);
        }
      }
    }
    this.note = Files.isRegularFile(file) ? "found at start" : "none yet";
  }

  /**
   * What a saved state depends on: QEMU, the kernel and the root image, each by path, size and
   * modification time; the initramfs by its content (each server writes it anew); the pooled VM's
   * memory and vCPUs, the acceleration and whether the machine has ACPI (another machine's
   * devices).
   */
  static String key(MicrovmFiles files, Path initramfs, GuestConfig pooled, KvmProbe.Accel accel)
      throws IOException {
    StringBuilder key = new StringBuilder(FORMAT).append('\n');
    for (Path part : List.of(files.qemu(), files.kernel(), files.rootfs())) {
      key.append(part)
          .append(' ')
          .append(Files.size(part))
          .append(' ')
          .append(Files.getLastModifiedTime(part).toMillis())
          .append('\n');
    }
    return key.append("initramfs ")
        .append(sha256(initramfs))
        .append("\nmemory ")
        .append(pooled.vmMemoryMb())
        .append("\nvcpus ")
        .append(pooled.vcpus())
        .append("\ntsc ")
        .append(files.tscKhz())
        .append("\naccel ")
        .append(accel)
        .append("\nacpi ")
        .append(files.acpi())
        .append('\n')
        .toString();
  }

  private static String sha256(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
      return HexFormat.of().formatHex(digest.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The file of this key, whether or not it exists yet. */
  Path file() {
    return file;
  }

  /**
   * The saved state, made first by {@code maker} when there is none; null when none can be had
   * (making one failed, now or before, or a restore from it failed): the pool then boots. One
   * caller makes it; the others wait for that, up to {@link #MAKING}, without holding a lock.
   */
  @Nullable Path ensure(Maker maker) throws InterruptedException {
    CompletableFuture<Boolean> mine = null;
    CompletableFuture<Boolean> theirs;
    synchronized (this) {
      if (disabled) {
        return null;
      }
      if (Files.isRegularFile(file)) {
        return file;
      }
      if (making == null) {
        making = mine = new CompletableFuture<>();
      }
      theirs = making;
    }
    if (mine != null) {
      boolean made = make(maker);
      synchronized (this) {
        making = null;
      }
      mine.complete(made);
      return made ? file : null;
    }
    try {
      return theirs.get(MAKING.toSeconds(), TimeUnit.SECONDS) ? file : null;
    } catch (ExecutionException | TimeoutException e) {
      return null;
    }
  }

  /** Makes the file through a temporary one; false, noted and logged, when it cannot. */
  private boolean make(Maker maker) throws InterruptedException {
    long started = System.nanoTime();
    Path temp = file.resolveSibling("." + file.getFileName() + ".tmp");
    try {
      templates.incrementAndGet();
      Files.deleteIfExists(temp);
      Files.createFile(
          temp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      maker.make(temp);
      try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
        out.force(true);
      }
      Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
      note =
          "saved by this server ("
              + Files.size(file) / (1024 * 1024)
              + " MiB, the template booted and saved in "
              + (System.nanoTime() - started) / 1_000_000
              + " ms)";
      return true;
    } catch (IOException | RuntimeException e) {
      synchronized (this) {
        disabled = true;
      }
      note = "none: the template could not be saved: " + e.getMessage();
      log.warn("cannot save a template VM; the pool boots its VMs: {}", e.getMessage());
      return false;
    } finally {
      try {
        Files.deleteIfExists(temp);
      } catch (IOException e) {
        log.warn("cannot remove {}: {}", temp, e.toString());
      }
    }
  }

  /** Discards the file after a restore from it failed; the pool boots from now on. */
  void discard(String why) {
    synchronized (this) {
      disabled = true;
    }
    note = "discarded: a restore failed: " + why;
    log.warn("a restore from {} failed, the file is discarded: {}", file, why);
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      log.warn("cannot remove {}: {}", file, e.toString());
    }
  }

  /** Counts a VM that came from the file, {@code millis} from QEMU's start to the agent's hello. */
  void restored(long millis) {
    restored.incrementAndGet();
    lastRestoreMs = millis;
  }

  /** For the health report: whether there is a file, and how many VMs came from it. */
  String status() {
    long last = lastRestoreMs;
    return note
        + "; "
        + restored.get()
        + " VMs restored, "
        + templates.get()
        + " templates booted since the server started"
        + (last < 0 ? "" : "; the last restore: " + last + " ms from QEMU's start to the agent");
  }

  /**
   * Saves the template {@code vm} into {@code into}: waits for its init's "ready" on the go port,
   * stops it, and migrates it through QMP to a socket the server listens on in the VM's directory
   * (QEMU's seccomp sandbox forbids a command, and QEMU 7.2 has no file URI). Only the first
   * connection is read, and only a migration QEMU calls completed is kept: a stream from anything
   * else never completes QEMU's. A stream of more than {@code maxBytes} is refused.
   */
  void save(Vm vm, Path into, long maxBytes, Duration timeout)
      throws IOException, InterruptedException {
    try (SocketChannel go = Qmp.connect(vm, vm.viaProc(Vm.GO_SOCKET), timeout);
        Qmp qmp = Qmp.connect(vm, timeout, timers)) {
      ByteBuffer ready = ByteBuffer.allocate(1);
      within(timeout, go, () -> go.read(ready));
      if (ready.position() != 1 || ready.get(0) != 'R') {
        throw new IOException("the template's init did not say it was ready: " + vm.whyEnded());
      }
      qmp.execute("stop", Map.of(), QMP_CALL);
      Path socket = vm.viaProc(SAVE_SOCKET);
      try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
        server.bind(UnixDomainSocketAddress.of(socket), 1);
        Files.setAttribute(socket, "unix:uid", sandboxUid);
        qmp.execute("migrate", Map.of("uri", "unix:" + SAVE_SOCKET), QMP_CALL);
        try (FileChannel out = FileChannel.open(into, StandardOpenOption.WRITE);
            SocketChannel stream = within(timeout, server, server::accept)) {
          long saved = within(timeout, stream, () -> out.transferFrom(stream, 0, maxBytes));
          ByteBuffer more = ByteBuffer.allocate(1);
          if (saved == maxBytes && within(timeout, stream, () -> (long) stream.read(more)) > 0) {
            throw new IOException("the template's state is larger than " + maxBytes + " bytes");
          }
        }
        awaitMigrated(qmp, timeout);
      }
    }
  }

  private static void awaitMigrated(Qmp qmp, Duration timeout)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      String status = qmp.execute("query-migrate", Map.of(), QMP_CALL).path("status").asText();
      if (status.equals("completed")) {
        return;
      }
      if (status.equals("failed") || status.equals("cancelled")) {
        throw new IOException("QEMU's migration " + status);
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IOException("QEMU's migration did not complete: " + status);
      }
      Thread.sleep(50);
    }
  }

  /**
   * Lets the restored {@code vm} run: waits until QEMU has read the whole state (it is then paused,
   * as the template was), resumes it through QMP, sends the go and removes both sockets' paths.
   * Returns the go port's connection, to be closed once the agent said hello.
   */
  SocketChannel resume(Vm vm, Duration timeout) throws IOException, InterruptedException {
    try (Qmp qmp = Qmp.connect(vm, timeout, timers)) {
      long deadline = System.nanoTime() + timeout.toNanos();
      String status;
      while ((status = qmp.execute("query-status", Map.of(), QMP_CALL).path("status").asText())
          .equals("inmigrate")) {
        if (System.nanoTime() - deadline > 0) {
          throw new IOException("QEMU did not read the saved state within " + timeout);
        }
        Thread.sleep(20);
      }
      if (!status.equals("paused") && !status.equals("running")) {
        throw new IOException("the restored VM is " + status + ", not paused");
      }
      qmp.execute("cont", Map.of(), QMP_CALL);
    }
    SocketChannel go = Qmp.connect(vm, vm.viaProc(Vm.GO_SOCKET), timeout);
    try {
      // Nothing else, not even another QEMU of the same uid, connects to them from now on.
      Files.deleteIfExists(vm.viaProc(Vm.QMP_SOCKET));
      Files.deleteIfExists(vm.viaProc(Vm.GO_SOCKET));
      ByteBuffer message = go();
      while (message.hasRemaining()) {
        go.write(message);
      }
      return go;
    } catch (IOException e) {
      go.close();
      throw e;
    }
  }

  /** The go: the magic, the host's time (seconds, nanoseconds) and fresh random bytes. */
  private ByteBuffer go() {
    Instant now = clock.instant();
    byte[] fresh = new byte[GO_RANDOM];
    random.nextBytes(fresh);
    ByteBuffer message =
        ByteBuffer.allocate(GO_MAGIC.length + 8 + 4 + GO_RANDOM).order(ByteOrder.LITTLE_ENDIAN);
    message.put(GO_MAGIC).putLong(now.getEpochSecond()).putInt(now.getNano()).put(fresh);
    Arrays.fill(fresh, (byte) 0);
    return message.flip();
  }

  private interface Io<T> {
    T run() throws IOException;
  }

  /** Runs a blocking call on {@code channel}, closing the channel when {@code timeout} passes. */
  private <T> T within(Duration timeout, Channel channel, Io<T> call) throws IOException {
    ScheduledFuture<?> closer =
        timers.schedule(
            () -> {
              try {
                channel.close();
              } catch (IOException e) {
                // Closed either way.
              }
            },
            timeout.toMillis(),
            TimeUnit.MILLISECONDS);
    try {
      return call.run();
    } finally {
      closer.cancel(false);
    }
  }
}
