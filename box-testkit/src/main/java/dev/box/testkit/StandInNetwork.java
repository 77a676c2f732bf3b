package dev.box.testkit;

import dev.box.api.internal.ShellScript;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * A stand-in for the world around a Box server, made of network namespaces and veth links this
 * class creates, so that no test packet leaves the machine.
 *
 * <p>The "world" namespace holds, on its end (203.0.113.1/28) of a veth to the server's namespace,
 * what sandboxes try to reach, each answered on port 80 by a listener that writes the line {@code
 * box-netcheck world <address>}: an internet host {@link #INTERNET}, a second one {@link
 * #INTERNET_NEIGHBOUR} in the same /24, a third {@link #FAR_INTERNET} outside it, the metadata
 * service {@link #METADATA} and a LAN host {@link #LAN}; and a DNS server on {@link #DNS} that maps
 * {@link #INTERNET_NAME} to {@link #INTERNET}. The world has no route beyond that link.
 *
 * <p>{@link Placement#OWN_NAMESPACE}: the server runs (through {@link #serverLauncher()}) in a
 * "host" namespace of its own: loopback, 203.0.113.10/28 on the veth, a default route through the
 * world, and {@code /etc/netns/<host>/resolv.conf} naming the stand-in DNS server. Nothing in it is
 * connected to the machine's own namespace.
 *
 * <p>{@link Placement#ROOT_NAMESPACE}: the server runs in the machine's namespace, beside the
 * container engines' daemons. The veth's end there has 203.0.113.10/28 and routes exactly the
 * stand-in addresses to the world, and an {@link UplinkGuard} stops, while the stand-in exists,
 * whatever would leave through the machine's uplinks.
 *
 * <p>Every name is {@link HarnessLeftovers#nameOfThisRun()} and a suffix; {@link #create} first
 * removes what a JVM that died left ({@link HarnessLeftovers#sweep()}), and {@link #close()}
 * removes everything. Needs root, iproute2 and nftables.
 */
final class StandInNetwork implements AutoCloseable {
  /** Bind-mounts {@code $0} over /etc/resolv.conf, then execs its arguments. */
  private static final String BIND_RESOLV_CONF =
      ShellScript.load(StandInNetwork.class, "bind-resolv-conf.sh");

  /** Turns IPv6 off in the namespace it runs in. */
  private static final String DISABLE_IPV6 =
      ShellScript.load(StandInNetwork.class, "disable-ipv6.sh");

  static final String INTERNET = "198.51.100.1";
  static final String INTERNET_NEIGHBOUR = "198.51.100.2";
  static final String FAR_INTERNET = "203.0.113.100";
  static final String DNS = "198.51.100.53";
  static final String METADATA = "169.254.169.254";
  static final String LAN = "10.77.0.5";
  static final String INTERNET_NAME = "internet.box-test";

  /** The port of every world listener. */
  static final int WORLD_PORT = 80;

  private static final String SERVER_SIDE = "203.0.113.10";
  private static final String WORLD_SIDE = "203.0.113.1";
  private static final String LINK = "/28";
  private static final List<String> WORLD =
      List.of(INTERNET, INTERNET_NEIGHBOUR, FAR_INTERNET, DNS, METADATA, LAN);

  /** What the machine's namespace routes to the world: the stand-in addresses and no more. */
  private static final List<String> ROUTED =
      List.of("198.51.100.0/24", FAR_INTERNET + "/32", METADATA + "/32", LAN + "/32");

  /** Where the server runs. */
  enum Placement {
    /** In a namespace this class creates, behind the world (the bubblewrap backend). */
    OWN_NAMESPACE,
    /** In the machine's own namespace, beside the container engines' daemons. */
    ROOT_NAMESPACE
  }

  private final Placement placement;
  private final String name;
  private final String world;
  private final String host;
  private final List<HarnessCommand.Daemon> daemons = new CopyOnWriteArrayList<>();
  private final List<UnixSocketForwarder> forwarders = new CopyOnWriteArrayList<>();
  private UplinkGuard guard = UplinkGuard.none();

  private StandInNetwork(Placement placement, String name) {
    this.placement = placement;
    this.name = name;
    this.world = name + "w";
    this.host = name + "h";
  }

  /** Builds the stand-in world for a server placed as given, after sweeping a dead run's. */
  static StandInNetwork create(Placement placement) {
    HarnessLeftovers.sweep();
    StandInNetwork network = new StandInNetwork(placement, HarnessLeftovers.nameOfThisRun());
    try {
      network.build();
      return network;
    } catch (RuntimeException e) {
      network.close();
      throw e;
    }
  }

  /**
   * The command words that run a program in the server's namespace, before the program's own: empty
   * for the machine's namespace. Unlike {@code ip netns exec} it keeps the caller's /sys, so that
   * the server sees the cgroup hierarchies; it bind-mounts the host namespace's resolv.conf in a
   * mount namespace of its own, as {@code ip netns exec} does.
   */
  List<String> serverLauncher() {
    if (placement == Placement.ROOT_NAMESPACE) {
      return List.of();
    }
    return List.of(
        "nsenter",
        "--net=/run/netns/" + host,
        "--",
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        BIND_RESOLV_CONF,
        resolvConf().toString());
  }

  /**
   * The port on this JVM's loopback that leads to {@code serverPort} on the server's loopback: the
   * same port in the machine's namespace; otherwise a {@link UnixSocketForwarder} to relay.pl in
   * the server's namespace, through a socket in a directory only root may enter.
   */
  int portFromHere(int serverPort) throws IOException {
    if (placement == Placement.ROOT_NAMESPACE) {
      return serverPort;
    }
    Path socket = runDir().resolve("server-" + serverPort + ".sock");
    List<String> relay = new ArrayList<>(List.of("perl", "-e", PerlScripts.RELAY));
    relay.addAll(List.of(socket.toString(), "127.0.0.1", Integer.toString(serverPort)));
    HarnessCommand.Daemon daemon = startDaemon(inServerNamespace(relay));
    if (!daemon.firstLine().equals("ready")) {
      throw new IllegalStateException("relay.pl did not start: " + daemon.firstLine());
    }
    UnixSocketForwarder forwarder = UnixSocketForwarder.start(socket);
    forwarders.add(forwarder);
    return forwarder.port();
  }

  /**
   * Starts a listener in the server's namespace on every address of {@code addresses}, all on one
   * port, and returns the port; each connection gets the line {@code box-netcheck <name>
   * <address>}.
   */
  int listenBesideServer(String listenerName, List<String> addresses) {
    List<String> command = new ArrayList<>(List.of("perl", "-e", PerlScripts.LISTEN, "stdin"));
    command.add(listenerName);
    command.add("0");
    command.addAll(addresses);
    return port(startDaemon(inServerNamespace(command)));
  }

  /** Runs probe.pl in the server's namespace against {@code targets} ({@code address:port}). */
  ProbeReport probeFromServer(List<String> targets) {
    targets.forEach(t -> requireStaysOnMachine(t.substring(0, t.lastIndexOf(':'))));
    List<String> command = new ArrayList<>(List.of("perl", "-e", PerlScripts.PROBE));
    command.addAll(targets);
    return ProbeReport.parse(targets, HarnessCommand.run(inServerNamespace(command), ""));
  }

  /** What {@code getent ahostsv4} answers for {@code hostName} in the server's namespace. */
  String resolveBesideServer(String hostName) {
    if (placement != Placement.OWN_NAMESPACE) {
      throw new IllegalStateException("the server's namespace uses the machine's own resolver");
    }
    return HarnessCommand.attempt(inServerNamespace(List.of("getent", "ahostsv4", hostName)), "")
        .output();
  }

  /**
   * The server namespace's addresses a sandbox must not reach: its end of the link to the world
   * and, when it is one of its addresses, {@code gateway} (a container engine's bridge). Not every
   * address of the machine's namespace: other engines' bridges come and go with their containers,
   * and the uplinks' are never tried.
   */
  List<String> hostAddresses(String gateway) {
    List<String> found = new ArrayList<>(List.of(SERVER_SIDE));
    for (String address : UplinkGuard.addresses(ipInServerNamespace("-o", "-4", "addr", "show"))) {
      if (address.equals(gateway) && !found.contains(address)) {
        found.add(address);
      }
    }
    return found;
  }

  /**
   * Throws unless a packet for {@code address} from the server's namespace stays on this machine
   * (see {@link UplinkGuard#requireStaysOnMachine}). Every target is checked before it is tried,
   * from the server's namespace or from a sandbox.
   */
  void requireStaysOnMachine(String address) {
    guard.requireStaysOnMachine(address);
  }

  /**
   * Sets the address of every bridge in the machine's namespace whose address was never set to the
   * one it has now; nothing when the server runs in its own namespace. Such a bridge takes the
   * lowest address of its ports, so it changes as containers come and go, while a container keeps
   * the old one in its ARP cache and loses its gateway (Podman 4.3's netavark leaves podman0 so;
   * Docker sets docker0's). Setting it once stops the changes; call it once the engine's bridge
   * exists, after the first sandbox.
   */
  void pinBridgeAddresses() throws IOException {
    if (placement != Placement.ROOT_NAMESPACE) {
      return;
    }
    try (Stream<Path> links = Files.list(Path.of("/sys/class/net"))) {
      for (Path link : links.toList()) {
        if (!Files.isDirectory(link.resolve("bridge"))) {
          continue;
        }
        String address = Files.readString(link.resolve("address")).strip();
        boolean set = Files.readString(link.resolve("addr_assign_type")).strip().equals("3");
        if (!set && !address.equals("00:00:00:00:00:00")) {
          ip("link", "set", "dev", link.getFileName().toString(), "address", address);
        }
      }
    }
  }

  /**
   * The IPv4 flows the guard has stopped at the machine's uplinks so far, from anything on the
   * machine; none when the server runs in its own namespace, which nothing connects to the
   * machine's.
   */
  List<UplinkGuard.Flow> flowsStoppedAtUplink() {
    return guard.stoppedFlows();
  }

  /** How many packets, IPv4 and IPv6, the guard has stopped at the uplinks so far. */
  long packetsStoppedAtUplink() {
    return guard.stoppedPackets();
  }

  @Override
  public void close() {
    for (UnixSocketForwarder forwarder : forwarders) {
      try {
        forwarder.close();
      } catch (IOException e) {
        // Its connections end with the relay's namespace below.
      }
    }
    daemons.forEach(HarnessCommand.Daemon::stop);
    daemons.clear();
    if (placement == Placement.ROOT_NAMESPACE) {
      HarnessCommand.attempt(List.of("ip", "link", "del", name), "");
      guard.remove();
    } else {
      HarnessLeftovers.removeNamespace(host);
    }
    HarnessLeftovers.removeNamespace(world);
    HarnessLeftovers.deleteDir(Path.of("/run", name));
  }

  // --- building ----------------------------------------------------------------------------------

  private void build() {
    addNamespace(world);
    if (placement == Placement.OWN_NAMESPACE) {
      addNamespace(host);
      ip(
          "link", "add", "vhost", "netns", host, "type", "veth", "peer", "name", "vworld", "netns",
          world);
      ip("-n", host, "addr", "add", SERVER_SIDE + LINK, "dev", "vhost");
      ip("-n", host, "link", "set", "vhost", "up");
      ip("-n", host, "route", "add", "default", "via", WORLD_SIDE);
      write(resolvConf(), "nameserver " + DNS + "\n");
    } else {
      guard = UplinkGuard.install(name);
      String routed = ip("-4", "route", "show", ROUTED.get(0)).strip();
      if (!routed.isEmpty()) {
        throw new IllegalStateException(
            ROUTED.get(0) + " is already routed here (" + routed + "): another run is using it");
      }
      ip("link", "add", name, "type", "veth", "peer", "name", "vworld", "netns", world);
      Path ipv6 = Path.of("/proc/sys/net/ipv6/conf", name, "disable_ipv6");
      if (Files.exists(ipv6)) {
        write(ipv6, "1\n");
      }
      ip("addr", "add", SERVER_SIDE + LINK, "dev", name);
      ip("link", "set", name, "up");
      for (String destination : ROUTED) {
        ip("route", "add", destination, "via", WORLD_SIDE, "dev", name);
      }
    }
    ip("-n", world, "addr", "add", WORLD_SIDE + LINK, "dev", "vworld");
    for (String address : WORLD) {
      ip("-n", world, "addr", "add", address + "/32", "dev", "vworld");
    }
    ip("-n", world, "link", "set", "vworld", "up");
    List<String> listener =
        new ArrayList<>(
            List.of("ip", "netns", "exec", world, "perl", "-e", PerlScripts.LISTEN, "stdin"));
    listener.add("world");
    listener.add(Integer.toString(WORLD_PORT));
    listener.addAll(WORLD.stream().filter(a -> !a.equals(DNS)).toList());
    port(startDaemon(listener));
    port(
        startDaemon(
            List.of(
                "ip",
                "netns",
                "exec",
                world,
                "perl",
                "-e",
                PerlScripts.DNS,
                DNS,
                INTERNET_NAME + "=" + INTERNET)));
  }

  /** A namespace with loopback up and IPv6 off (no router solicitations, nothing to watch). */
  private static void addNamespace(String namespace) {
    ip("netns", "add", namespace);
    HarnessCommand.run(List.of("ip", "netns", "exec", namespace, "sh", "-c", DISABLE_IPV6), "");
    ip("-n", namespace, "link", "set", "lo", "up");
  }

  private HarnessCommand.Daemon startDaemon(List<String> command) {
    HarnessCommand.Daemon daemon = HarnessCommand.startDaemon(command);
    daemons.add(daemon);
    return daemon;
  }

  private static int port(HarnessCommand.Daemon daemon) {
    if (!daemon.firstLine().startsWith("port=")) {
      daemon.stop();
      throw new IllegalStateException("a stand-in listener did not start: " + daemon.firstLine());
    }
    return Integer.parseInt(daemon.firstLine().substring("port=".length()).strip());
  }

  private List<String> inServerNamespace(List<String> command) {
    if (placement == Placement.ROOT_NAMESPACE) {
      return command;
    }
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", host));
    full.addAll(command);
    return full;
  }

  private String ipInServerNamespace(String... args) {
    List<String> command = new ArrayList<>(List.of("ip"));
    if (placement == Placement.OWN_NAMESPACE) {
      command.addAll(List.of("-n", host));
    }
    command.addAll(List.of(args));
    return HarnessCommand.run(command, "");
  }

  /** Where the harness keeps its sockets: a directory of the machine's /run, root's alone. */
  private Path runDir() throws IOException {
    return Files.createDirectories(
        Path.of("/run", name),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  private Path resolvConf() {
    return Path.of("/etc/netns", host, "resolv.conf");
  }

  private static String ip(String... args) {
    return HarnessCommand.ip(args);
  }

  private static void write(Path file, String text) {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
