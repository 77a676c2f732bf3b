package dev.box.backend.microvm;

import dev.box.api.internal.FileTrees;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * One running VM: its QEMU process and its directory ({@code <state>/microvm/vms/<name>}, mode
 * 0700), which holds its config disk (the agent's secret), its console log and QEMU's own output.
 *
 * <p>QEMU is started through {@code setpriv --pdeathsig KILL} from the backend's launcher thread,
 * which lives as long as the server: when the server dies, however it dies, the kernel kills every
 * VM it started. A network-on VM's QEMU runs in a network namespace of its own ({@link VmNetwork}),
 * entered through {@code nsenter} under a {@code setpriv --pdeathsig KILL} of its own.
 *
 * @param agent where the server reaches the guest's agent: a host loopback port QEMU forwards, or
 *     with the network on the relay's Unix socket in the VM's directory
 * @param network the VM's network namespace with the network on, else null
 */
record Vm(Path dir, Process process, SocketAddress agent, @Nullable VmNetwork network) {
  static final String CONFIG_DISK = "config";
  static final String CONSOLE_LOG = "console.log";
  private static final String QEMU_LOG = "qemu.log";

  /** How much of a log an error message quotes: the guest writes the console, hostile. */
  private static final int LOG_TAIL_BYTES = 600;

  /**
   * Starts the VM of {@code dir} (made here; it must not exist), its config disk holding {@code
   * secret} and what the guest is told of its session ({@code guest}); on failure nothing of it is
   * left.
   *
   * @param launcher the thread that starts every QEMU of the backend (see the class comment)
   * @param network makes the VM's network namespace; used when {@code guest} has the network on
   */
  static Vm start(
      MicrovmFiles files,
      Path dir,
      Path initramfs,
      GuestConfig guest,
      byte[] secret,
      KvmProbe.Accel accel,
      ExecutorService launcher,
      VmNetwork.Opener network)
      throws IOException {
    Files.createDirectories(dir.getParent());
    Files.createDirectory(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path config = dir.resolve(CONFIG_DISK);
    // A disk is at least one sector.
    byte[] sector = new byte[512];
    System.arraycopy(secret, 0, sector, 0, secret.length);
    byte[] line = guest.configLine();
    System.arraycopy(line, 0, sector, secret.length, line.length);
    Files.write(config, sector);
    VmNetwork namespace = null;
    try {
      namespace = guest.networkOn() ? network.open(dir) : null;
      return start(files, dir, initramfs, guest, accel, launcher, namespace);
    } catch (IOException | RuntimeException e) {
      if (namespace != null) {
        namespace.close();
      }
      FileTrees.deleteTreeQuietly(dir);
      throw e;
    }
  }

  private static Vm start(
      MicrovmFiles files,
      Path dir,
      Path initramfs,
      GuestConfig guest,
      KvmProbe.Accel accel,
      ExecutorService launcher,
      @Nullable VmNetwork network)
      throws IOException {
    int port = network == null ? freeLoopbackPort() : VmNetwork.FORWARDED_PORT;
    List<String> argv = new ArrayList<>();
    if (network != null) {
      // Dies with the server before nsenter runs, as QEMU does after it.
      argv.addAll(List.of("setpriv", "--pdeathsig", "KILL", "--"));
      argv.addAll(network.enter());
    }
    argv.addAll(List.of("setpriv", "--pdeathsig", "KILL", "--"));
    argv.addAll(QemuCommand.of(files, dir, initramfs, guest, port, accel));
    ProcessBuilder builder =
        new ProcessBuilder(argv)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectOutput(dir.resolve(QEMU_LOG).toFile())
            .redirectErrorStream(true);
    Future<Process> started = launcher.submit(builder::start);
    try {
      SocketAddress agent =
          network == null
              ? new InetSocketAddress(InetAddress.getLoopbackAddress(), port)
              : network.agent();
      return new Vm(dir, started.get(30, TimeUnit.SECONDS), agent, network);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IOException("cannot start QEMU: " + cause.getMessage(), cause);
    } catch (TimeoutException e) {
      started.cancel(true);
      throw new IOException("QEMU did not start within 30 s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting QEMU", e);
    }
  }

  /**
   * A loopback port nothing listens on now, for QEMU to forward; another process may take it before
   * QEMU does, and QEMU then fails to start, saying so.
   */
  private static int freeLoopbackPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** Whether QEMU runs, and with the network on its namespace's relay and way out. */
  boolean alive() {
    return process.isAlive() && (network == null || network.alive());
  }

  /**
   * Why the VM ended, for an error message: QEMU's exit status and the end of its output and of the
   * guest's console, each bounded.
   */
  String whyEnded() {
    String status = process.isAlive() ? "QEMU still runs" : "QEMU exited " + process.exitValue();
    return status
        + "; QEMU: "
        + tail(dir.resolve(QEMU_LOG))
        + "; console: "
        + tail(dir.resolve(CONSOLE_LOG));
  }

  /** The end of a log file, bounded, printable ASCII only; "(none)" when it cannot be read. */
  static String tail(Path file) {
    try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
      long length = in.length();
      byte[] bytes = new byte[(int) Math.min(length, LOG_TAIL_BYTES)];
      in.seek(length - bytes.length);
      in.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8).replaceAll("[^\\x20-\\x7e]+", " ").strip();
    } catch (IOException e) {
      return "(none)";
    }
  }

  /**
   * Kills QEMU, waits for it to end, ends its network namespace's helpers, and removes the VM's
   * directory; idempotent.
   */
  void destroy() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    } finally {
      if (network != null) {
        network.close();
      }
    }
    FileTrees.deleteTreeQuietly(dir);
  }
}
