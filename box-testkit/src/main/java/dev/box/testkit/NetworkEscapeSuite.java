package dev.box.testkit;

import static dev.box.testkit.StandInNetwork.FAR_INTERNET;
import static dev.box.testkit.StandInNetwork.INTERNET;
import static dev.box.testkit.StandInNetwork.INTERNET_NAME;
import static dev.box.testkit.StandInNetwork.INTERNET_NEIGHBOUR;
import static dev.box.testkit.StandInNetwork.LAN;
import static dev.box.testkit.StandInNetwork.METADATA;
import static dev.box.testkit.StandInNetwork.WORLD_PORT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.api.internal.FileTrees;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestReporter;
import org.junit.jupiter.api.Timeout;

/**
 * What a network-on sandbox must not reach, and what it must, checked black-box through a real Box
 * server over HTTP against the {@link StandInNetwork}: a world of network namespaces with an
 * internet host, a DNS server, a metadata service and a LAN host, so that no packet of the suite
 * leaves the machine.
 *
 * <p>From inside a {@code "network":"on"} sandbox, every attempt below must fail: the Box API on
 * loopback and on every host address, a listener on the host's loopback, the host's other addresses
 * and the sandbox's gateway, the metadata service, the LAN host, and another sandbox by every
 * address it has. Each such test first shows that the target answers from where the server runs (so
 * a failure from the sandbox means something) and, in the same probe, that the sandbox does reach
 * the internet host (so the network is not simply dead). The internet host must answer, and the
 * stand-in name must resolve where the server's resolver is the stand-in's. The egress policy
 * ({@code "egress":{"allow_out":[...],"deny_out":[...]}} in the spec, allow winning over deny; the
 * operator's {@code egress_allow} and {@code egress_deny} settings) is checked likewise, and {@code
 * GET /v1/health} must say how egress is enforced.
 *
 * <p>Connections are made by probe.pl (perl-base, in the minimal Debian image and on every Debian
 * host) to numeric addresses, 2 s to connect; nothing is looked up in DNS except in the DNS test.
 * Every target is checked before it is tried not to be, nor be routed through, the machine's uplink
 * ({@link StandInNetwork#requireStaysOnMachine}).
 *
 * <p>One server per test class, in a JVM of its own placed as the subclass says; sessions are
 * reused where a test allows. Needs root (namespaces, veth links, nftables). Do not run two
 * subclasses at once: the container layout routes the stand-in addresses in the machine's
 * namespace.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class NetworkEscapeSuite extends BackendSuite {
  private static final String NETWORK_ON = "\"network\":\"on\"";
  private static final String LOOPBACK = "127.0.0.1";

  private @Nullable StandInNetwork world;
  private @Nullable ServerFleet fleet;
  private @Nullable Path logs;
  private @Nullable Server main;
  private @Nullable Sandbox attacker;
  private final List<Server> servers = new CopyOnWriteArrayList<>();
  private final List<Sandbox> sandboxes = new CopyOnWriteArrayList<>();

  /** Every address seen in a sandbox of the suite but loopback, to tell its packets apart. */
  private final Set<String> sandboxAddresses = ConcurrentHashMap.newKeySet();

  private List<String> hostAddresses = List.of();
  private String gateway = "";
  private int loopbackPort;
  private int hostPort;

  /**
   * Whether the server runs in a network namespace of the suite's own, behind the stand-in world
   * (the bubblewrap backend, whose sandboxes are made from the server's namespace), rather than in
   * the machine's namespace beside the container engines' daemons. Only then is the server's
   * resolver the stand-in DNS server.
   */
  protected boolean serverInOwnNamespace() {
    return false;
  }

  @BeforeAll
  final void buildTheWorldAndStartTheServer() throws Exception {
    OptionalPiece.assumeBackend(backendName());
    world =
        StandInNetwork.create(
            serverInOwnNamespace()
                ? StandInNetwork.Placement.OWN_NAMESPACE
                : StandInNetwork.Placement.ROOT_NAMESPACE);
    fleet = new ServerFleet(backendName(), serverSettings());
    logs = Files.createTempDirectory("box-netcheck-");
    main = startServer("main", Map.of());
    attacker = sandbox(box(), "attacker", NETWORK_ON);
    // After the first sandbox: an engine may create its bridge, and its gateway address, only then.
    world().pinBridgeAddresses();
    gateway = SandboxNetwork.defaultGateway(attacker().run("cat /proc/net/route", "").stdout());
    hostAddresses = world().hostAddresses(gateway);
    loopbackPort = world().listenBesideServer("loopback", List.of(LOOPBACK));
    hostPort = world().listenBesideServer("host", hostAddresses);
  }

  @AfterAll
  final void stopEverything() throws IOException {
    List<UplinkGuard.Flow> ours = List.of();
    try {
      for (Server server : List.copyOf(servers)) {
        stopServer(server);
      }
      ServerFleet f = fleet;
      if (f != null) {
        f.close();
      }
    } finally {
      StandInNetwork w = world;
      if (w != null) {
        List<UplinkGuard.Flow> stopped = w.flowsStoppedAtUplink();
        long packets = w.packetsStoppedAtUplink();
        if (packets > 0) {
          System.out.printf(
              "[network escape %s] the guard stopped %d packets at the uplink; IPv4 flows %s%n",
              backendName(), packets, stopped);
        }
        ours =
            stopped.stream()
                .filter(
                    f ->
                        sandboxAddresses.contains(f.source())
                            || UplinkGuard.isStandIn(f.destination()))
                .toList();
        w.close();
      }
      if (logs != null) {
        FileTrees.deleteTreeQuietly(logs);
      }
    }
    assertThat(ours)
        .as("flows from the suite's sandboxes, or to the stand-in, stopped at the machine's uplink")
        .isEmpty();
  }

  // --- what must work ----------------------------------------------------------------------------

  @Test
  void internetHosts_answerASandbox() {
    ProbeReport r = probe(attacker(), List.of(world(INTERNET), world(FAR_INTERNET)));

    assertThat(r.firstLine(world(INTERNET))).as("%s", r).isEqualTo(marker(INTERNET));
    assertThat(r.firstLine(world(FAR_INTERNET))).as("%s", r).isEqualTo(marker(FAR_INTERNET));
  }

  /**
   * The stand-in name resolves inside a sandbox. Only where the server runs in its own namespace:
   * Docker and Podman give a container the resolver of the machine's /etc/resolv.conf, which cannot
   * be pointed at the stand-in DNS server without changing the engines' configuration (dockerd's
   * {@code --dns}, containers.conf) or Box's container spec, and a query there would leave the
   * machine. So the suite never resolves a name in a container, and this test is skipped for them.
   */
  @Test
  void dns_resolvesTheStandInNameInsideASandbox() {
    assumeTrue(
        serverInOwnNamespace(),
        "the containers' resolver is the machine's, which the suite must not query");
    assertThat(world().resolveBesideServer(INTERNET_NAME)).startsWith(INTERNET + " ");

    Answer a = attacker().run("getent ahostsv4 " + INTERNET_NAME, "");

    assertThat(a.stdout()).as("%s", a).startsWith(INTERNET + " ");
  }

  @Test
  void health_reportsHowEgressIsEnforced() {
    Answer health = box().get("/v1/health");

    assertThat(health.body().path("enforced").path("egress").asText(""))
        .as("enforced.egress in %s", health.body())
        .isNotBlank()
        .isNotEqualTo("none");
  }

  // --- what a sandbox must not reach -------------------------------------------------------------

  /**
   * The server listens on loopback only, as by default, so only that address is shown to answer;
   * the port is tried on every host address and the gateway too, in case a backend forwards one of
   * them to the host's loopback (slirp4netns does so for its gateway unless told not to).
   */
  @Test
  void boxApi_isUnreachableFromASandbox_onLoopbackAndEveryHostAddress() {
    assertAnswersBesideServer(List.of(target(LOOPBACK, main().apiPort())));

    assertSandboxReachesNone(attacker(), INTERNET, hostTargets(main().apiPort()));
  }

  /** Tried on every host address and the gateway too, for the same reason as the API. */
  @Test
  void hostLoopbackListener_isUnreachableFromASandbox() {
    assertAnswersBesideServer(List.of(target(LOOPBACK, loopbackPort)));

    assertSandboxReachesNone(attacker(), INTERNET, hostTargets(loopbackPort));
  }

  @Test
  void hostAddresses_areUnreachableFromASandbox_andSoIsItsGateway() {
    assertThat(hostAddresses).as("the host's addresses besides loopback").isNotEmpty();
    assertAnswersBesideServer(hostAddresses.stream().map(a -> target(a, hostPort)).toList());

    assertSandboxReachesNone(attacker(), INTERNET, addressTargets(hostPort));
  }

  @Test
  void metadataService_isUnreachableFromASandbox() {
    assertAnswersBesideServer(List.of(world(METADATA)));

    assertSandboxReachesNone(attacker(), INTERNET, List.of(world(METADATA)));
  }

  @Test
  void lanHost_isUnreachableFromASandbox() {
    assertAnswersBesideServer(List.of(world(LAN)));

    assertSandboxReachesNone(attacker(), INTERNET, List.of(world(LAN)));
  }

  /**
   * A listener in a second sandbox on all its addresses; the check that it answers is made from
   * inside that sandbox, the one place every address of it is sure to be reachable from.
   */
  @Test
  void anotherSandbox_isUnreachableByEveryAddressItHas() {
    Sandbox victim = sandbox(box(), "victim", NETWORK_ON);
    Answer started =
        victim.run(
            "perl -e \"$BOX_LISTEN\" forever victim 0 0.0.0.0 >/tmp/listener 2>&1 &"
                + " for i in $(seq 100); do grep -q port= /tmp/listener && break; sleep 0.1; done;"
                + " cat /tmp/listener; cat /proc/net/fib_trie",
            ",\"env\":{\"BOX_LISTEN\":" + BoxHttp.quote(PerlScripts.LISTEN) + "}");
    int port = SandboxNetwork.listenerPort(started.stdout());
    recordAddresses(started.stdout());
    List<String> targets =
        SandboxNetwork.localAddresses(started.stdout()).stream().map(a -> target(a, port)).toList();
    ProbeReport fromInside = probe(victim, targets);
    assertThat(targets.stream().filter(t -> !fromInside.connected(t)).toList())
        .as("its own addresses, from inside the second sandbox:%s", fromInside)
        .isEmpty();

    assertSandboxReachesNone(attacker(), INTERNET, targets);
  }

  // --- the egress policy -------------------------------------------------------------------------

  @Test
  void egressDenyOut_blocksTheDeniedRange_andNothingElse() {
    Sandbox denied = sandbox(box(), "deny", egress(List.of(), List.of("198.51.100.0/24")));

    assertSandboxReachesNone(
        denied, FAR_INTERNET, List.of(world(INTERNET), world(INTERNET_NEIGHBOUR)));
  }

  @Test
  void egressDenyAllButOneAllowed_reachesOnlyThatHost() {
    Sandbox one =
        sandbox(box(), "only-one", egress(List.of(INTERNET + "/32"), List.of("0.0.0.0/0")));

    assertSandboxReachesNone(
        one, INTERNET, List.of(world(INTERNET_NEIGHBOUR), world(FAR_INTERNET)));
  }

  @Test
  void egressAllowOutInASpec_doesNotOpenTheLan_butTheOperatorsSettingDoes() throws Exception {
    assertAnswersBesideServer(List.of(world(LAN)));
    Sandbox asked = sandbox(box(), "lan-asked", egress(List.of(LAN + "/32"), List.of()));
    assertSandboxReachesNone(asked, INTERNET, List.of(world(LAN)));

    Server opened = startServer("lan-allowed", Map.of("egress_allow", "10.77.0.0/16"));
    Sandbox allowed = sandbox(opened.http(), "lan-allowed", NETWORK_ON);

    assertSandboxReachesNone(allowed, LAN, forbiddenWhateverTheSettings(opened.apiPort()));
    stopServer(opened);
  }

  /**
   * Asking in the spec for the metadata service, the host's loopback or its addresses is either
   * refused as a validation error or has no effect; either is reported.
   */
  @Test
  void egressAllowOutInASpec_neverOpensTheMetadataServiceOrTheHost(TestReporter reporter) {
    Map<List<String>, List<String>> asks = new LinkedHashMap<>();
    asks.put(List.of(METADATA + "/32"), List.of(world(METADATA)));
    asks.put(List.of("127.0.0.0/8"), hostTargets(loopbackPort));
    List<String> hostCidrs = new ArrayList<>();
    Stream.concat(hostAddresses.stream(), Stream.of(gateway))
        .forEach(a -> hostCidrs.add(a + "/32"));
    asks.put(hostCidrs, addressTargets(hostPort));
    for (Map.Entry<List<String>, List<String>> ask : asks.entrySet()) {
      String spec = egress(ask.getKey(), List.of());
      String id = id("ask");
      Answer created = box().post("/v1/sessions/" + id, "{" + spec + "}");
      sandboxes.add(new Sandbox(box(), id, spec));
      if (created.status() == 400) {
        assertThat(created.errorCode()).as("%s", created).isEqualTo("validation_error");
        reporter.publishEntry("allow_out " + ask.getKey(), "refused: " + created.errorMessage());
        continue;
      }
      assertThat(created.status()).as("%s", created).isEqualTo(201);
      reporter.publishEntry("allow_out " + ask.getKey(), "accepted, without effect");
      assertSandboxReachesNone(new Sandbox(box(), id, spec), INTERNET, ask.getValue());
    }
  }

  @Test
  void operatorEgressAllow_ofTheMetadataRange_isRefusedAtStartup() throws IOException {
    Throwable refused =
        catchThrowable(
            () -> startServer("metadata-allowed", Map.of("egress_allow", "169.254.0.0/16")));

    assertThat(refused)
        .as("starting a server with egress_allow=169.254.0.0/16")
        .isInstanceOf(IllegalStateException.class);

    assertThat(Files.readString(logs().resolve("metadata-allowed.log")))
        .contains("egress_allow")
        .contains("169.254.0.0/16");
  }

  @Test
  void egressAllowOut_ofADomainName_isAValidationError() {
    Answer a = createRejected(egress(List.of(INTERNET_NAME), List.of()));

    assertThat(a.errorMessage()).contains(INTERNET_NAME);
  }

  @Test
  void egressMalformedCidr_isAValidationError_withAJsonBody() {
    for (String malformed : List.of("198.51.100.0/33", "198.51.100.256", "198.51.100.0/x")) {
      Answer allow = createRejected(egress(List.of(malformed), List.of()));
      Answer deny = createRejected(egress(List.of(), List.of(malformed)));

      assertThat(allow.errorMessage()).as("allow_out %s", malformed).contains(malformed);
      assertThat(deny.errorMessage()).as("deny_out %s", malformed).contains(malformed);
    }
  }

  // --- helpers -----------------------------------------------------------------------------------

  /** A session on one of the suite's servers and the spec fields every request to it repeats. */
  private record Sandbox(BoxHttp http, String id, String spec) {
    /**
     * Runs {@code cmd}; {@code more} holds further JSON fields with a leading comma, or is empty.
     */
    Answer run(String cmd, String more) {
      Answer a = http.exec(id, cmd, spec + ",\"timeout_sec\":60" + more);
      assertThat(a.status()).as("exec in %s: %s", id, a).isEqualTo(200);
      return a;
    }
  }

  /** Creates a session with {@code spec} on {@code http}, deleted when the suite ends. */
  private Sandbox sandbox(BoxHttp http, String name, String spec) {
    Sandbox s = new Sandbox(http, id(name), spec);
    sandboxes.add(s);
    Answer created = http.post("/v1/sessions/" + s.id(), "{" + s.spec() + "}");
    assertThat(created.status())
        .as("creating %s with %s: %s", s.id(), spec, created)
        .isEqualTo(201);
    return s;
  }

  /** Asks the main server for a session with {@code spec} and checks it is refused as invalid. */
  private Answer createRejected(String spec) {
    String id = id("invalid");
    Answer a = box().post("/v1/sessions/" + id, "{" + spec + "}");
    sandboxes.add(new Sandbox(box(), id, spec));

    assertThat(a.status()).as("%s -> %s", spec, a).isEqualTo(400);
    assertThat(a.errorCode()).as("%s", a).isEqualTo("validation_error");
    assertThat(a.errorMessage()).as("%s", a).isNotBlank();
    return a;
  }

  private static String id(String name) {
    return "net-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static String egress(List<String> allowOut, List<String> denyOut) {
    return NETWORK_ON
        + ",\"egress\":{\"allow_out\":"
        + jsonList(allowOut)
        + ",\"deny_out\":"
        + jsonList(denyOut)
        + "}";
  }

  private static String jsonList(List<String> values) {
    return "[" + String.join(",", values.stream().map(BoxHttp::quote).toList()) + "]";
  }

  /** Runs probe.pl inside {@code sandbox} against {@code targets}, each checked to stay here. */
  private ProbeReport probe(Sandbox sandbox, List<String> targets) {
    targets.forEach(t -> world().requireStaysOnMachine(t.substring(0, t.lastIndexOf(':'))));
    Answer a =
        sandbox.run(
            "perl -e \"$BOX_PROBE\" " + String.join(" ", targets) + "; cat /proc/net/fib_trie",
            ",\"env\":{\"BOX_PROBE\":" + BoxHttp.quote(PerlScripts.PROBE) + "}");
    recordAddresses(a.stdout());
    return ProbeReport.parse(targets, a.stdout());
  }

  /**
   * Remembers the addresses but loopback in a sandbox's /proc/net/fib_trie, printed in {@code
   * output}.
   */
  private void recordAddresses(String output) {
    SandboxNetwork.localAddresses(output).stream()
        .filter(address -> !address.startsWith("127."))
        .forEach(sandboxAddresses::add);
  }

  private void assertAnswersBesideServer(List<String> targets) {
    ProbeReport r = world().probeFromServer(targets);
    assertThat(targets.stream().filter(t -> !r.connected(t)).toList())
        .as(
            "targets that do not answer where the server runs, so the test would prove nothing:%s",
            r)
        .isEmpty();
  }

  /**
   * Probes {@code targets} and the world listener on {@code alive} from {@code sandbox} at once,
   * and asserts that {@code alive} answers (the sandbox's network works) and no target does.
   */
  private void assertSandboxReachesNone(Sandbox sandbox, String alive, List<String> targets) {
    List<String> tried = new ArrayList<>(targets);
    tried.add(world(alive));
    ProbeReport r = probe(sandbox, List.copyOf(new LinkedHashSet<>(tried)));

    assertThat(r.firstLine(world(alive)))
        .as("%s from the sandbox, which shows that its network works:%s", alive, r)
        .isEqualTo(marker(alive));
    assertThat(targets.stream().filter(r::connected).toList())
        .as("what the sandbox reached:%s", r)
        .isEmpty();
  }

  /** {@code port} on loopback, every host address and the sandbox's gateway. */
  private List<String> hostTargets(int port) {
    List<String> targets = new ArrayList<>(List.of(target(LOOPBACK, port)));
    targets.addAll(addressTargets(port));
    return targets;
  }

  /** {@code port} on every host address and the sandbox's gateway (often one of them). */
  private List<String> addressTargets(int port) {
    Set<String> targets = new LinkedHashSet<>();
    hostAddresses.forEach(a -> targets.add(target(a, port)));
    targets.add(target(gateway, port));
    return List.copyOf(targets);
  }

  /**
   * What no setting opens: the metadata service, the host's loopback and addresses, and the API of
   * the server on {@code apiPort}.
   */
  private List<String> forbiddenWhateverTheSettings(int apiPort) {
    List<String> targets = new ArrayList<>(List.of(world(METADATA)));
    targets.addAll(hostTargets(loopbackPort));
    targets.addAll(addressTargets(hostPort));
    targets.addAll(hostTargets(apiPort));
    return targets;
  }

  /** A server of the suite: its child JVM, and a client that reaches its API from this JVM. */
  private record Server(ServerFleet.Child child, BoxHttp http) {
    /** The port the server listens on, on the loopback of its own namespace. */
    int apiPort() {
      return child.port();
    }
  }

  /** Starts a server with {@code extra} over the settings, placed as the subclass says. */
  private Server startServer(String name, Map<String, String> extra) throws Exception {
    ServerFleet.Child child =
        fleet()
            .startChild(
                fleet().newDataDir(),
                logs().resolve(name + ".log"),
                world().serverLauncher(),
                extra);
    Server server = new Server(child, ServerFleet.http(world().portFromHere(child.port())));
    servers.add(server);
    return server;
  }

  /** Deletes the server's sessions, then ends its stdin, which shuts it down cleanly. */
  private void stopServer(Server server) {
    for (Sandbox s : List.copyOf(sandboxes)) {
      if (s.http() == server.http()) {
        s.http().delete("/v1/sessions/" + s.id());
        sandboxes.remove(s);
      }
    }
    try {
      server.child().process().getOutputStream().close();
      server.child().process().waitFor(30, TimeUnit.SECONDS);
    } catch (IOException e) {
      // Already gone; the fleet kills what is left.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    servers.remove(server);
  }

  private static String target(String address, int port) {
    return address + ":" + port;
  }

  private static String world(String address) {
    return target(address, WORLD_PORT);
  }

  private static String marker(String worldAddress) {
    return "box-netcheck world " + worldAddress;
  }

  private StandInNetwork world() {
    return started(world);
  }

  private ServerFleet fleet() {
    return started(fleet);
  }

  private Path logs() {
    return started(logs);
  }

  private Server main() {
    return started(main);
  }

  private BoxHttp box() {
    return main().http();
  }

  private Sandbox attacker() {
    return started(attacker);
  }
}
