package dev.box.backend.microvm;

import dev.box.api.internal.FileTrees;
import dev.box.sandbox.CgroupDriver;
import dev.box.sandbox.Launcher;
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
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * One running VM: its QEMU process and its directory ({@code <state>/microvm/vms/<name>}), which
 * holds its config disk (the agent's secret), its console log, QEMU's own output, a link to the
 * initramfs and its shares' mounts ({@link ShareMounts}).
 *
 * <p>QEMU runs as the sandbox user's host uid and gid, with no supplementary group, no capability
 * and no-new-privileges, through {@code setpriv}, in its VM's directory, where it names every file
 * relatively: the state directory above it is root's alone. It is started with {@code --pdeathsig
 * KILL} from the backend's launcher thread, which lives as long as the server: when the server
 * dies, however it dies, the kernel kills every VM it started. A network-on VM's QEMU runs in a
 * network namespace of its own ({@link VmNetwork}), entered through {@code nsenter} (as root,
 * before the uid changes) under a {@code setpriv --pdeathsig KILL} of its own. QEMU is in the VM's
 * cgroups on the host ({@link VmCgroups}) from its first instruction, and in namespaces of its own
 * ({@link QemuJail}).
 *
 * @param agent where the server reaches the guest's agent: a host loopback port QEMU forwards, or
 *     with the network on the relay's Unix socket
 * @param network the VM's network namespace with the network on, else null
 * @param mounts the mounts of the VM's shares in its directory
 * @param cgroup QEMU's cgroups on the host
 */
record Vm(
    Path dir,
    Process process,
    SocketAddress agent,
    @Nullable VmNetwork network,
    ShareMounts mounts,
    CgroupDriver.SessionCgroup cgroup) {
  static final String CONFIG_DISK = "config";
  static final String CONSOLE_LOG = "console.log";
  static final String INITRAMFS = "initramfs";

  /**
   * The directory of a template's or a restored VM's sockets, the sandbox user's (QEMU makes its
   * sockets there; the VM's directory is root's).
   */
  static final String SOCKETS = "sockets";

  /** The sockets QEMU listens on there: the go port's and QMP's. */
  static final String GO_SOCKET = SOCKETS + "/go.sock";

  static final String QMP_SOCKET = SOCKETS + "/qmp.sock";
  private static final String QEMU_LOG = "qemu.log";

  /** How much of a log an error message quotes: the guest writes the console, hostile. */
  private static final int LOG_TAIL_BYTES = 600;

  /**
   * Starts the VM of {@code dir} (made here; it must not exist), its config disk holding {@code
   * secret} and what the guest is told of its session ({@code guest}), its shares mounted by {@code
   * mounts}; on failure nothing of it is left. It boots, boots as a template (its config disk all
   * zeros: nothing of a session is in a template) or is restored from {@code state}, which the
   * server opens as QEMU's stdin: QEMU never opens the file itself.
   *
   * @param launcher the thread that starts every QEMU of the backend (see the class comment)
   * @param network makes the VM's network namespace; used when {@code guest} has the network on
   * @param cgroups makes QEMU's cgroups
   * @param jail the namespaces QEMU runs in, or null where the host has no bubblewrap
   */
  static Vm start(
      MicrovmFiles files,
      Path dir,
      Path initramfs,
      GuestConfig guest,
      byte[] secret,
      KvmProbe.Accel accel,
      ExecutorService launcher,
      VmNetwork.Opener network,
      ShareMounts mounts,
      VmCgroups cgroups,
      @Nullable QemuJail jail,
      QemuCommand.Start start,
      @Nullable Path state)
      throws IOException {
    Files.createDirectories(dir.getParent());
    Files.createDirectory(dir, permissions("rwx--x---"));
    VmNetwork namespace = null;
    CgroupDriver.SessionCgroup cgroup = null;
    try {
      prepare(dir, initramfs, guest, secret, mounts, start);
      namespace = guest.networkOn() ? network.open(dir) : null;
      cgroup = cgroups.create(dir.getFileName().toString(), guest);
      return start(
          files, dir, guest, accel, launcher, namespace, mounts, cgroup, jail, start, state);
    } catch (IOException | RuntimeException e) {
      if (cgroup != null) {
        cgroup.destroy();
      }
      if (namespace != null) {
        namespace.close();
      }
      remove(dir, mounts);
      throw e;
    }
  }

  private static Vm start(
      MicrovmFiles files,
      Path dir,
      GuestConfig guest,
      KvmProbe.Accel accel,
      ExecutorService launcher,
      @Nullable VmNetwork network,
      ShareMounts mounts,
      CgroupDriver.SessionCgroup cgroup,
      @Nullable QemuJail jail,
      QemuCommand.Start start,
      @Nullable Path state)
      throws IOException {
    int port = network == null ? freeLoopbackPort() : VmNetwork.FORWARDED_PORT;
    List<String> argv = new ArrayList<>(Launcher.joining(cgroup.createProcessGroup(0)));
    // Dies with the server before nsenter and bubblewrap run, as QEMU does after them; they need
    // root, so the uid changes after them.
    argv.addAll(List.of("setpriv", "--pdeathsig", "KILL", "--"));
    if (network != null) {
      argv.addAll(network.enter());
    }
    if (jail != null) {
      argv.addAll(jail.argv(files, dir, accel));
    }
    String uid = Integer.toString(guest.sandboxUid());
    argv.addAll(
        List.of(
            "setpriv",
            "--reuid",
            uid,
            "--regid",
            uid,
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--pdeathsig",
            "KILL",
            "--"));
    argv.addAll(QemuCommand.of(files, dir.getFileName().toString(), guest, port, accel, start));
    File stdin = state == null ? new File("/dev/null") : state.toFile();
    ProcessBuilder builder =
        new ProcessBuilder(argv)
            .directory(dir.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(stdin))
            .redirectOutput(dir.resolve(QEMU_LOG).toFile())
            .redirectErrorStream(true);
    Future<Process> started = launcher.submit(builder::start);
    try {
      SocketAddress agent =
          network == null
              ? new InetSocketAddress(InetAddress.getLoopbackAddress(), port)
              : network.agent();
      return new Vm(dir, started.get(30, TimeUnit.SECONDS), agent, network, mounts, cgroup);
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
   * Makes what QEMU, the sandbox user, may use of the VM's directory, and nothing more: the
   * directory (root's, which that user may enter but not list or change), the config disk (it may
   * read it), the console log (its own), a link to the initramfs, and its shares' mounts.
   */
  private static void prepare(
      Path dir,
      Path initramfs,
      GuestConfig guest,
      byte[] secret,
      ShareMounts mounts,
      QemuCommand.Start start)
      throws IOException {
    int uid = guest.sandboxUid();
    Files.setAttribute(dir, "unix:gid", uid);
    Path config = dir.resolve(CONFIG_DISK);
    byte[] disk = new byte[GuestConfig.DISK_BYTES];
    System.arraycopy(secret, 0, disk, 0, secret.length);
    byte[] lines = guest.configLine();
    if (secret.length + lines.length >= disk.length) {
      throw new IOException("the VM's config is larger than its disk: " + lines.length + " bytes");
    }
    System.arraycopy(lines, 0, disk, secret.length, lines.length);
    if (start == QemuCommand.Start.TEMPLATE) {
      Arrays.fill(disk, (byte) 0);
    }
    Files.write(Files.createFile(config, permissions("rw-------")), disk);
    Files.setAttribute(config, "unix:gid", uid);
    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("r--r-----"));
    Path console = Files.createFile(dir.resolve(CONSOLE_LOG), permissions("rw-------"));
    Files.setAttribute(console, "unix:uid", uid);
    Files.createLink(dir.resolve(INITRAMFS), initramfs);
    if (start != QemuCommand.Start.BOOT) {
      Path sockets = Files.createDirectory(dir.resolve(SOCKETS), permissions("rwx------"));
      Files.setAttribute(sockets, "unix:uid", uid);
      Files.setAttribute(sockets, "unix:gid", uid);
    }
    mounts.stage(guest.shares(), dir, uid);
  }

  private static FileAttribute<Set<PosixFilePermission>> permissions(String mode) {
    return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(mode));
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

  /**
   * A file of the VM's directory by a path of at most 40 bytes, through QEMU's working directory in
   * {@code /proc}: a Unix socket's path has at most 107, and the state directory's may be longer.
   * Only root, which the server is, may follow it.
   */
  Path viaProc(String name) {
    return Path.of("/proc", Long.toString(process.pid()), "cwd", name);
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
   * Kills QEMU, waits for it to end, ends its network namespace's helpers, removes its cgroups,
   * detaches its shares and removes the VM's directory; idempotent.
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
    cgroup.destroy();
    remove(dir, mounts);
  }

  /**
   * Removes a VM's directory once no mount is left under it: a share's folder is the host's, never
   * deleted with the VM.
   */
  static void remove(Path dir, ShareMounts mounts) {
    if (mounts.unstage(dir)) {
      FileTrees.deleteTreeQuietly(dir);
    }
  }
}
