package dev.box.backend.kubernetes;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.agent.AgentAddress;
import dev.box.core.agent.AgentLink;
import dev.box.core.agent.LinkDeadlines;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.backend.SharedSessions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sessions as pods of a Kubernetes cluster (see {@link PodShape} for what each pod is, and
 * docs/KUBERNETES.md). A session's pod, Secret and NetworkPolicy are named after the session and
 * its tenant only, so that every replica of Box configured with the same namespace and control
 * token finds them; processes start through the pod's agent on its pod port.
 */
public final class KubernetesBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(KubernetesBackend.class);

  /** How long the agent may take to answer a request. */
  private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(10);

  /** How long a connection to an agent on the pod network may take before the API server's way. */
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

  private static final String PATH_DIRECT = "the pod network";
  private static final String PATH_API_SERVER = "the API server";

  /** What the backend enforces and by what, as {@link BackendStatus#enforced()} says it. */
  private static final Map<String, String> ENFORCED =
      Map.of(
          "memory", "pod limit (the kubelet's cgroup)",
          "cpu", "pod limit (the kubelet's cgroup)",
          "pids", "none",
          "network", "NetworkPolicy: enforced only by a network plugin that implements it",
          "egress", "NetworkPolicy ipBlocks: as network",
          "timeout", "kill (the pod's agent ends the whole tree)",
          "output", "bounded",
          "host_mounts", "refused: a cluster has no host paths to offer");

  private final Pods pods;
  private final Replicas replicas;
  private final PodSessions sessions;
  private final Pool pool;
  private final Duration startTimeout;
  private final ScheduledExecutorService timers;
  private volatile String lastPath = "none yet";

  /**
   * @param client the cluster's API, which the backend closes
   * @param replica this server as a replica of its tenant, whose sessions it serves
   * @param defaultImage the image of sessions that name none (or the reference's default), or null
   *     to run the reference's default
   * @param poolSize how many warm pods of the pooled shape the tenant keeps ({@link Pool}); 0 for
   *     none
   * @param startTimeout how long a pod may take to run (an image pull included)
   * @param timers runs the deadlines of the agents' links and the pool's refill; the backend shuts
   *     it down on close
   */
  public KubernetesBackend(
      KubernetesSettings settings,
      KubernetesClient client,
      Replica replica,
      @Nullable String defaultImage,
      int poolSize,
      Duration startTimeout,
      ScheduledExecutorService timers) {
    String tenant = Labels.tenant(settings.namespace(), replica.controlToken());
    this.pods = new Pods(client, settings, tenant, defaultImage);
    this.replicas = new Replicas(client, settings.namespace(), tenant, replica);
    this.sessions = new PodSessions(pods, replicas, startTimeout);
    this.pool = new Pool(pods, poolSize, timers);
    this.startTimeout = startTimeout;
    this.timers = timers;
    pool.start();
  }

  /**
   * The backend on the cluster {@code settings} name: its kubeconfig, else the standard places.
   *
   * @param replica this server as a replica of its tenant
   * @param defaultImage the image of sessions that name none, or null
   * @param poolSize how many warm pods the tenant keeps; 0 for none
   * @param timers runs the deadlines of the agents' links; the backend shuts it down on close
   * @throws IllegalArgumentException when the kubeconfig cannot be read
   */
  public static KubernetesBackend open(
      KubernetesSettings settings,
      Replica replica,
      @Nullable String defaultImage,
      int poolSize,
      ScheduledExecutorService timers) {
    Config config;
    String kubeconfig = settings.kubeconfig();
    if (kubeconfig != null) {
      try {
        config = Config.fromKubeconfig(Files.readString(Path.of(kubeconfig)));
      } catch (IOException | RuntimeException e) {
        throw new IllegalArgumentException(
            "k8s_kubeconfig: cannot read " + kubeconfig + ": " + e.getMessage(), e);
      }
    } else {
      config = Config.autoConfigure(null);
    }
    // Health asks the API server on every call: an unreachable one must answer at once, not after
    // the client's retries.
    config.setRequestRetryBackoffLimit(0);
    config.setConnectionTimeout(3_000);
    config.setRequestTimeout(10_000);
    return new KubernetesBackend(
        settings,
        new KubernetesClientBuilder().withConfig(config).build(),
        replica,
        defaultImage,
        poolSize,
        Duration.ofMinutes(5),
        timers);
  }

  @Override
  public String name() {
    return "kubernetes";
  }

  @Override
  public BackendStatus status() {
    String namespace = pods.settings().namespace();
    try {
      // One pod at most: health and every session start ask, whatever the namespace holds.
      pods.client()
          .pods()
          .inNamespace(namespace)
          .withLabel(Labels.MANAGED_BY)
          .list(new ListOptionsBuilder().withLimit(1L).build());
    } catch (KubernetesClientException e) {
      return new BackendStatus(
          name(), false, "the cluster's API server does not answer: " + rootMessage(e), enforced());
    }
    return new BackendStatus(
        name(),
        true,
        pods.maker().describe() + " in namespace " + namespace + "; processes " + agentPath(),
        enforced(),
        java.util.Set.of(
            BoxCapabilities.IMAGES,
            BoxCapabilities.READ_ONLY_ROOTFS,
            BoxCapabilities.TERMINAL,
            BoxCapabilities.PORTS));
  }

  /** {@link #ENFORCED}, its network row saying what keeps a network-off session off. */
  private Map<String, String> enforced() {
    Map<String, String> enforced = new java.util.HashMap<>(ENFORCED);
    enforced.put(
        "network",
        switch (pods.settings().networkOff()) {
          case NAMESPACE ->
              "off: a network namespace of the session's own in the pod, only loopback (box-guard"
                  + " --net-off; a pod whose seccomp profile refuses it does not start), and a"
                  + " NetworkPolicy; on: NetworkPolicy, enforced only by a network plugin that"
                  + " implements it";
          case POLICY ->
              "off and on: NetworkPolicy alone (k8s_network_off=policy), enforced only by a"
                  + " network plugin that implements it";
        });
    URI url = replicas.url();
    enforced.put(
        "managed_processes",
        url == null
            ? "this replica only: it advertises no replica_url, so the others cannot reach the"
                + " processes it starts"
            : "any replica: the others reach this one's at " + url);
    return Map.copyOf(enforced);
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    String name = pods.podName(spec.sessionId());
    try {
      Pods.Placed taken = pool.take(spec, name);
      Pods.Placed placed = taken != null ? taken : pods.create(name, spec);
      // From here on the session's pod, which a pool pod is under its own name.
      name = placed.name();
      return connect(name, pods.awaitRunning(name, startTimeout), placed.secret());
    } catch (IOException | IllegalStateException | KubernetesClientException e) {
      pods.remove(name);
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE,
          "cannot start the pod of session " + spec.sessionId() + ": " + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      pods.remove(name);
      throw new BoxException(BoxErrorCode.RUNTIME_UNAVAILABLE, "interrupted while starting", e);
    }
  }

  /**
   * The running pod of session {@code spec}, which another replica (or an earlier server) started;
   * null when it has none, or none that runs.
   */
  @Override
  public @Nullable Sandbox adopt(SandboxSpec spec) {
    try {
      Pods.Placed placed = pods.placed(pods.podName(spec.sessionId()));
      Pod pod = placed == null ? null : pods.get(placed.name());
      if (placed == null || pod == null || !Pods.isReady(pod)) {
        return null;
      }
      return connect(placed.name(), pod.getStatus().getPodIP(), placed.secret());
    } catch (IOException | KubernetesClientException e) {
      log.info("cannot adopt the pod of session {}: {}", spec.sessionId(), e.getMessage());
      return null;
    }
  }

  /**
   * Dials the agent of pod {@code name} at {@code ip}, or through the API server ({@link
   * AgentTunnel}) as {@code k8s_agent_path} says; a pod whose agent never answers is removed.
   */
  private PodSandbox connect(String name, String ip, byte[] secret) throws IOException {
    InetSocketAddress direct = new InetSocketAddress(ip, PodShape.AGENT_PORT);
    AgentTunnel tunnel =
        switch (pods.settings().agentPath()) {
          case DIRECT -> null;
          case API_SERVER -> openTunnel(name);
          case AUTO -> answers(direct) ? null : openTunnel(name);
        };
    lastPath = tunnel == null ? PATH_DIRECT : PATH_API_SERVER;
    AgentLink link =
        AgentLink.dial(
            name,
            new AgentAddress(tunnel == null ? direct : tunnel.address(), secret),
            new LinkDeadlines(REPLY_TIMEOUT, timers));
    try {
      link.awaitAgent(startTimeout, () -> pods.remove(name));
    } catch (IOException e) {
      link.close();
      if (tunnel != null) {
        tunnel.close();
      }
      // The pod may have ended since it ran: its termination message says why.
      Pod pod = pods.get(name);
      throw pod == null ? e : new IOException(e.getMessage() + PodShape.endedBecause(pod), e);
    }
    return new PodSandbox(name, link, tunnel, pods);
  }

  private AgentTunnel openTunnel(String pod) throws IOException {
    return AgentTunnel.open(pods.client(), pods.settings().namespace(), pod);
  }

  /** Whether the agent's port accepts a connection at {@code address} within a short wait. */
  private static boolean answers(InetSocketAddress address) {
    try (Socket probe = new Socket()) {
      probe.connect(address, (int) PROBE_TIMEOUT.toMillis());
      return true;
    } catch (IOException e) {
      log.info(
          "the agent at {} does not answer on the pod network ({}): through the API server",
          address,
          e.getMessage());
      return false;
    }
  }

  /** How processes reach the pods' agents, as health reports it. */
  private String agentPath() {
    return switch (pods.settings().agentPath()) {
      case DIRECT -> "through the pods' agents on the pod network";
      case API_SERVER ->
          "through the pods' agents, reached through the API server (pods/exec of box-agent"
              + " --pipe)";
      case AUTO ->
          "through the pods' agents, on the pod network where it answers, else through the API"
              + " server (pods/exec); last used: "
              + lastPath;
    };
  }

  @Override
  public SharedSessions sharedSessions() {
    return sessions;
  }

  /** The message of the deepest cause: fabric8's own names the call, not what went wrong. */
  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == e ? String.valueOf(e.getMessage()) : root.toString();
  }

  /**
   * Nothing at start: sessions belong to the tenant, not to this replica, and the lease renewal
   * ({@link SharedSessions#renew}) removes those no replica serves any more.
   */
  @Override
  public void removeOrphans() {}

  @Override
  public @Nullable PoolLevel poolLevel() {
    return pool.level();
  }

  /**
   * Removes the tenant's warm pods and stops refilling them: for the last replica that stops, as
   * the server decides; {@link #close} leaves them to the other replicas.
   */
  public void drainPool() {
    pool.drain();
  }

  /**
   * Whether another replica of the tenant is alive; when that cannot be told, it is assumed to be,
   * and the pool is left to it (or to the next replica, which takes its pods).
   */
  private boolean othersAlive() {
    try {
      return replicas.othersAlive();
    } catch (KubernetesClientException e) {
      return true;
    }
  }

  /**
   * Stops the pool's refill, removes the pool's free pods when this is the last replica, and gives
   * up this replica's lease.
   */
  @Override
  public void close() {
    if (!othersAlive()) {
      pool.drain();
    }
    pool.close();
    replicas.leave();
    pods.client().close();
    timers.shutdownNow();
  }
}
