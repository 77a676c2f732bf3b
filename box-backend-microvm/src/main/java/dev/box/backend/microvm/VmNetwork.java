package dev.box.backend.microvm;

import static java.util.Objects.requireNonNull;

import dev.box.api.BoxEgress;
import dev.box.core.Hashes;
import dev.box.core.agent.AgentSockets;
import dev.box.core.backend.HostCommand;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.EgressRuleset;
import dev.box.core.net.NetnsFirewall;
import dev.box.guard.GuestInit;
import dev.box.sandbox.NamespaceHost;
import dev.box.sandbox.UserModeNetwork;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The network namespace a network-on VM's QEMU runs in, with the same way out as a network-on
 * bubblewrap sandbox: the egress firewall ({@link NetnsFirewall}, {@link EgressRuleset} with the
 * session's rules) and slirp4netns ({@link UserModeNetwork}), both in place before QEMU starts.
 * QEMU then runs its user-mode network for the guest without {@code restrict}, and its gateway maps
 * to this namespace's own loopback, where nothing of the host is; the guest's traffic leaves as
 * QEMU's own sockets, which the firewall judges.
 *
 * <p>The namespace's holder is {@code box-agent --relay} (made by {@code unshare --net}, through
 * {@code setpriv --pdeathsig KILL} from the backend's launcher thread like QEMU, and ending when
 * its stdin, the server's pipe, ends): it listens on a Unix socket (mode 0600, named by a hash of
 * the VM's name in the directory of the server's agent sockets, whose path is short enough for a
 * Unix socket whatever the data directory's: {@link AgentSockets}) and relays each connection to
 * the port QEMU forwards to the guest's agent on the namespace's loopback. So no host TCP port
 * exists for the VM, and the server reaches the agent through that socket. Only numbers and paths
 * the server made are on any command line.
 */
final class VmNetwork implements AutoCloseable {
  /** The port QEMU forwards to the guest's agent, on the loopback of the VM's namespace. */
  static final int FORWARDED_PORT = GuestInit.AGENT_PORT;

  /** What the relays' socket names start with, in their directory ({@link #socketFor}). */
  static final String SOCKET_PREFIX = "vm-";

  private static final String RELAY_LOG = "relay.log";
  private static final long READY_SECONDS = 10;

  /**
   * What the host gives network-on VMs, found once per backend.
   *
   * @param egress the operator's egress policy
   * @param readers platform threads for blocking reads of the helpers' ready bytes
   */
  record Host(
      @Nullable Path slirp4netns,
      NetnsFirewall firewall,
      @Nullable Path unshare,
      @Nullable Path nsenter,
      @Nullable Path setpriv,
      EgressPolicy egress,
      ExecutorService readers) {
    /** Finds slirp4netns and util-linux and probes the firewall. */
    static Host probe(EgressPolicy egress, ExecutorService readers) {
      return new Host(
          HostCommand.find("slirp4netns"),
          NetnsFirewall.probe(),
          HostCommand.find("unshare"),
          HostCommand.find("nsenter"),
          HostCommand.find("setpriv"),
          egress,
          readers);
    }

    /** How network-on VMs are kept off the host: {@code nftables}, or {@code none: why}. */
    String status() {
      if (unshare == null || nsenter == null || setpriv == null) {
        return "none: unshare, nsenter or setpriv not found (apt-get install util-linux);"
            + " network on is refused";
      }
      return NamespaceHost.networkStatus(slirp4netns, firewall);
    }

    /** Whether network-on VMs can start. */
    boolean available() {
      return unshare != null
          && nsenter != null
          && setpriv != null
          && slirp4netns != null
          && firewall.available();
    }
  }

  /** Makes the namespace of a VM, given the VM's directory; see {@link #open}. */
  @FunctionalInterface
  interface Opener {
    VmNetwork open(Path vmDir) throws IOException;
  }

  private final Path nsenter;
  private final long holderPid;
  private final Process holder;
  private final Process slirp;
  private final Path socket;

  private VmNetwork(Path nsenter, Process holder, Process slirp, Path socket) {
    this.nsenter = nsenter;
    this.holderPid = holder.pid();
    this.holder = holder;
    this.slirp = slirp;
    this.socket = socket;
  }

  /**
   * Makes the namespace of the VM of {@code vmDir}: starts its holder, the relay ({@code relay} is
   * the host's box-agent), from {@code launcher}; once the holder says it is ready (and so is in a
   * namespace of its own, which is checked), loads the firewall with the session's {@code egress}
   * rules into that namespace and attaches slirp4netns to it. On failure nothing of it is left.
   *
   * @throws IOException when any step fails
   */
  static VmNetwork open(
      Host host, Path relay, Path vmDir, Path socket, BoxEgress egress, ExecutorService launcher)
      throws IOException {
    if (!host.available()) {
      throw new IOException(
          "network on needs the egress firewall and slirp4netns: " + host.status());
    }
    Path sockets = requireNonNull(socket.getParent());
    if (!Files.isDirectory(sockets)) {
      Files.createDirectories(sockets);
      Files.setPosixFilePermissions(sockets, PosixFilePermissions.fromString("rwx------"));
    }
    Files.deleteIfExists(socket);
    ProcessBuilder builder =
        new ProcessBuilder(
                String.valueOf(host.setpriv()),
                "--pdeathsig",
                "KILL",
                "--",
                String.valueOf(host.unshare()),
                "--net",
                "--",
                relay.toString(),
                "--relay",
                socket.toString(),
                Integer.toString(FORWARDED_PORT))
            .redirectError(vmDir.resolve(RELAY_LOG).toFile())
            .directory(new File("/"));
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/bin:/bin");
    Process holder = start(builder, launcher);
    Process slirp = null;
    try {
      awaitReady(holder, host.readers(), vmDir.resolve(RELAY_LOG));
      requireOwnNamespace(holder.pid());
      host.firewall()
          .apply(
              holder.pid(),
              EgressRuleset.render(
                  host.egress(),
                  egress,
                  NetnsFirewall.hostAddresses(),
                  UserModeNetwork.forbidden(),
                  List.of(UserModeNetwork.DNS)));
      slirp =
          UserModeNetwork.start(requireNonNull(host.slirp4netns()), holder.pid(), host.readers());
      return new VmNetwork(requireNonNull(host.nsenter()), holder, slirp, socket);
    } catch (IOException | RuntimeException e) {
      if (slirp != null) {
        UserModeNetwork.stop(slirp);
      }
      stopHolder(holder);
      deleteQuietly(socket);
      throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
    }
  }

  /**
   * The socket of the relay of VM {@code vmName}, in {@code dir}: the directory of the server's
   * agent sockets ({@link AgentSockets#root}).
   */
  static Path socketFor(Path dir, String vmName) {
    return dir.resolve(SOCKET_PREFIX + Hashes.shortSha256(vmName) + ".sock");
  }

  /** Starts the holder on the launcher thread, whose death is the server's. */
  private static Process start(ProcessBuilder builder, ExecutorService launcher)
      throws IOException {
    Future<Process> started = launcher.submit(builder::start);
    try {
      return started.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IOException("cannot start the VM's network namespace: " + cause.getMessage(), e);
    } catch (TimeoutException e) {
      started.cancel(true);
      throw new IOException("the VM's network namespace did not start within 30 s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the VM's network namespace", e);
    }
  }

  /** Waits for the relay's ready byte: it listens, in the namespace unshare made. */
  private static void awaitReady(Process holder, ExecutorService readers, Path log)
      throws IOException {
    InputStream out = holder.getInputStream();
    Future<Integer> ready = readers.submit(() -> out.read());
    try {
      if (ready.get(READY_SECONDS, TimeUnit.SECONDS) != '1') {
        throw new IOException(
            "the relay of the VM's namespace ended before it was ready: " + Vm.tail(log));
      }
    } catch (TimeoutException e) {
      ready.cancel(true);
      throw new IOException("the relay was not ready within " + READY_SECONDS + " s", e);
    } catch (ExecutionException e) {
      throw new IOException("the relay failed: " + e.getCause(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the relay", e);
    }
  }

  /**
   * Refuses a holder that shares this server's network namespace: the firewall must never be loaded
   * into the server's own.
   */
  private static void requireOwnNamespace(long pid) throws IOException {
    Path own = Files.readSymbolicLink(Path.of("/proc/self/ns/net"));
    Path holders = Files.readSymbolicLink(Path.of("/proc/" + pid + "/ns/net"));
    if (own.equals(holders)) {
      throw new IOException("the relay is not in a network namespace of its own");
    }
  }

  /**
   * The words that start QEMU in this namespace, before its own command: {@code nsenter} with the
   * holder's pid. QEMU's forward then listens in this namespace only; that the server reaches the
   * guest's agent through the relay at all shows QEMU is in the relay's namespace.
   */
  List<String> enter() {
    return List.of(nsenter.toString(), "--net=/proc/" + holderPid + "/ns/net", "--");
  }

  /** The relay's socket, where the server reaches the guest's agent. */
  UnixDomainSocketAddress agent() {
    return UnixDomainSocketAddress.of(socket);
  }

  /** Whether the holder, and so the way to the agent, is still there. */
  boolean alive() {
    return holder.isAlive() && slirp.isAlive();
  }

  /** Ends slirp4netns and the relay; the namespace goes with the last of them and QEMU. */
  @Override
  public void close() {
    UserModeNetwork.stop(slirp);
    stopHolder(holder);
    deleteQuietly(socket);
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // A stale socket is removed with the next server's orphans.
    }
  }

  private static void stopHolder(Process holder) {
    try {
      holder.getOutputStream().close();
    } catch (IOException e) {
      // It is killed either way.
    }
    holder.destroyForcibly();
  }
}
