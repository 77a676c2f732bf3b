package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.Cidr;
import dev.box.core.backend.Sandbox;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Box's NetworkPolicies ({@link NetworkPolicies#forPod}) hold, shown by traffic between pods of the
 * stand-in cluster, whose kubelet enforces them with nftables ({@link StandInNetworkPolicies}).
 * Each pod runs {@code listen.pl} on the ports it names; {@code connect.pl} in a pod says how a
 * connection from there ends: a denied one is rejected at once, so "denied" is the policy's answer,
 * not a timeout. Every address is on the stand-in's internal network or the pod's own (the
 * link-local metadata address too: a pod of the test holds it, reached on-link): nothing leaves the
 * machine. Needs the Docker engine, the test image and nftables on the host (as root).
 */
class NetworkPolicyTest {
  private static final String NS = "box-sandboxes";
  private static final int AGENT = PodShape.AGENT_PORT;
  private static final int OTHER = 8000;
  private static final Map<String, String> BOX = Map.of(NetworkPolicies.BOX_POD_LABEL, "box");

  /** The cloud's metadata address, which the test gives a pod of its own. */
  private static final String METADATA = "169.254.169.254";

  private static final AtomicInteger TESTS = new AtomicInteger();

  // One cluster for the class, each test's pods and policies named apart.
  @TempDir static Path volumes;
  private static StandInCluster cluster;
  private static KubernetesClient client;
  private final String prefix = "t" + TESTS.incrementAndGet() + "-";

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = new StandInCluster(NS, volumes);
    client = cluster.client();
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  /** The name of this test's {@code name}. */
  private String named(String name) {
    return prefix + name;
  }

  @Test
  void onlyBoxsPodsReachTheAgentPort_andNoOtherPort() throws Exception {
    String session = pod(named("session"), Map.of(Labels.POD, named("session")));
    pod(named("stranger"), Map.of());
    // Selected by no policy, a pod is open.
    assertThat(connect(named("stranger"), session, OTHER)).isEqualTo("connected");

    policy(boxNamespace(List.of()).forPod(named("session"), BoxNetworkMode.OFF, BoxEgress.NONE));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> connect(named("stranger"), session, OTHER).startsWith("denied"));
    // A pod of Box's that starts after the policy is admitted as it starts.
    pod(named("box"), BOX);

    assertThat(connect(named("box"), session, AGENT)).isEqualTo("connected");
    assertThat(connect(named("box"), session, OTHER)).startsWith("denied");
    assertThat(connect(named("stranger"), session, AGENT)).startsWith("denied");
    assertThat(connect(named("stranger"), session, OTHER)).startsWith("denied");
    // The node (Box on this host) reaches it, as the kubelet's probes do.
    assertThat(reachableFromTheNode(session, AGENT)).isTrue();
  }

  @Test
  void aSessionsPod_admitsBoxsPodsToItsAgent_andTheNode() throws Exception {
    pod(named("box"), BOX);
    pod(named("stranger"), Map.of());
    KubernetesBackend backend = cluster.backend(Map.of("k8s_box_namespace", NS));
    try {
      Sandbox sandbox = backend.start(KubernetesBackendTest.spec("np1"));
      try {
        String session =
            client.pods().inNamespace(NS).withName(sandbox.id()).get().getStatus().getPodIP();

        assertThat(connect(named("box"), session, AGENT)).isEqualTo("connected");
        assertThat(connect(named("stranger"), session, AGENT)).startsWith("denied");
        // Box on this host, the node, runs the session's processes through the agent.
        assertThat(KubernetesBackendTest.run(sandbox, "echo ran")).isEqualTo("ran\n");
      } finally {
        sandbox.destroy();
      }
    } finally {
      backend.close();
    }
  }

  @Test
  void networkOff_reachesNothing() throws Exception {
    String box = pod(named("box"), BOX);
    policy(boxNamespace(List.of()).forPod(named("session"), BoxNetworkMode.OFF, BoxEgress.NONE));
    pod(named("session"), Map.of(Labels.POD, named("session")));

    assertThat(connect(named("session"), box, OTHER)).startsWith("denied");
    assertThat(connect(named("session"), "127.0.0.1", OTHER)).isEqualTo("connected");
  }

  @Test
  void networkOn_reachesNeitherAnotherPodNorALinkLocalAddress() throws Exception {
    String other = pod(named("other"), Map.of());
    policy(boxNamespace(List.of()).forPod(named("session"), BoxNetworkMode.ON, BoxEgress.NONE));
    pod(named("session"), Map.of(Labels.POD, named("session")));
    // A stand-in metadata service, on-link: the other pod holds the link-local address and the
    // session routes it onto the pods' internal bridge, which has no way off this machine (and
    // whose engine drops what is not addressed inside it: unfiltered, the session would get no
    // answer). "denied" is the policy's rejection, in the session's own namespace.
    ip(named("other"), "addr", "add", METADATA + "/32", "dev", "eth0");
    ip(named("session"), "route", "add", METADATA + "/32", "dev", "eth0");

    assertThat(connect(named("other"), other, OTHER)).isEqualTo("connected");
    assertThat(connect(named("session"), other, OTHER)).startsWith("denied");
    assertThat(connect(named("session"), METADATA, OTHER)).startsWith("denied");
  }

  @Test
  void networkOn_reachesPodsOutsideTheClusterRanges_butNotDenyOut_unlessAllowOut()
      throws Exception {
    String allowed = pod(named("allowed"), Map.of());
    String denied = pod(named("denied"), Map.of());
    String third = pod(named("third"), Map.of());
    // The cluster ranges here leave the pod network out, so the session may reach it.
    NetworkPolicies policies = boxNamespace(List.of(Cidr.parse("10.96.0.0/12")));
    policy(
        policies.forPod(
            named("session"),
            BoxNetworkMode.ON,
            new BoxEgress(List.of(), List.of(Cidr.parse(denied + "/32")))));
    pod(named("session"), Map.of(Labels.POD, named("session")));

    assertThat(connect(named("session"), allowed, OTHER)).isEqualTo("connected");
    assertThat(connect(named("session"), third, OTHER)).isEqualTo("connected");
    assertThat(connect(named("session"), denied, OTHER)).startsWith("denied");

    // An allow-list: deny_out everything, allow_out one pod.
    NetworkPolicy allowList =
        policies.forPod(
            named("session"),
            BoxNetworkMode.ON,
            new BoxEgress(
                List.of(Cidr.parse(allowed + "/32")),
                List.of(Cidr.parse("0.0.0.0/0"), Cidr.parse("::/0"))));
    client
        .network()
        .networkPolicies()
        .inNamespace(NS)
        .withName(named("session"))
        .edit(
            p -> {
              p.setSpec(allowList.getSpec());
              return p;
            });
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> connect(named("session"), third, OTHER).startsWith("denied"));
    assertThat(connect(named("session"), allowed, OTHER)).isEqualTo("connected");
    assertThat(connect(named("session"), denied, OTHER)).startsWith("denied");
  }

  /** Box's policies, Box's pods being in the sandbox namespace. */
  private static NetworkPolicies boxNamespace(List<Cidr> clusterRanges) {
    return new NetworkPolicies(
        NS,
        NS,
        clusterRanges.isEmpty() ? KubernetesSettings.defaults().clusterRanges() : clusterRanges);
  }

  private void policy(NetworkPolicy policy) {
    client.network().networkPolicies().inNamespace(NS).resource(policy).create();
  }

  /** Starts pod {@code name} listening on the agent's port and another, and returns its IP. */
  private String pod(String name, Map<String, String> labels) throws IOException {
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withLabels(labels)
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("main")
            .withImage(StandInCluster.IMAGE)
            .withCommand("perl", "-e", script("listen.pl"), "" + AGENT, "" + OTHER)
            .endContainer()
            .endSpec()
            .build();
    client.pods().inNamespace(NS).resource(pod).create();
    // The kubelet writes the IP as it reports the pod running, its policies loaded.
    String ip =
        Objects.requireNonNull(
            await().atMost(Duration.ofSeconds(60)).until(() -> ipOf(name), Objects::nonNull));
    // The listener is up once it answers from inside the pod.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> connect(name, "127.0.0.1", OTHER).equals("connected"));
    return ip;
  }

  private static @Nullable String ipOf(String pod) {
    Pod p = client.pods().inNamespace(NS).withName(pod).get();
    return p == null || p.getStatus() == null ? null : p.getStatus().getPodIP();
  }

  /** How a TCP connection from pod {@code from} to {@code address}:{@code port} ends. */
  private static String connect(String from, String address, int port) throws IOException {
    List<String> argv =
        new ArrayList<>(List.of("exec", StandInKubelet.container(from), "perl", "-e"));
    argv.addAll(List.of(script("connect.pl"), address, "" + port));
    return Docker.run(argv).strip();
  }

  /** Runs {@code ip ARGS} in the network namespace of pod {@code pod} (as root). */
  private static void ip(String pod, String... args) throws IOException, InterruptedException {
    String pid =
        Docker.run(List.of("inspect", "--format", "{{.State.Pid}}", StandInKubelet.container(pod)))
            .strip();
    List<String> argv = new ArrayList<>(List.of("nsenter", "-t", pid, "-n", "ip"));
    argv.addAll(List.of(args));
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
  }

  private static boolean reachableFromTheNode(String address, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(address, port), 10_000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static String script(String name) throws IOException {
    try (InputStream in = NetworkPolicyTest.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IOException("no resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
