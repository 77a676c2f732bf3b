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
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * Sessions as pods of a Kubernetes cluster (see {@link PodShape} for what each pod is, and
 * docs/KUBERNETES.md). A session's pod, Secret and NetworkPolicy are named after the session and
 * its tenant only, so that every replica of Box configured with the same namespace and control
 * token finds them; processes start through the pod's agent on its pod port.
 */
public final class KubernetesBackend implements SandboxBackend {
  /** How long the agent may take to answer a request. */
  private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(10);

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
  private final Pool pool;
  private final Duration startTimeout;
  private final ScheduledExecutorService timers;

  /**
   * @param client the cluster's API, which the backend closes
   * @param controlToken the control token of the server: with the namespace, it names the tenant
   *     whose sessions this server serves
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
      String controlToken,
      @Nullable String defaultImage,
      int poolSize,
      Duration startTimeout,
      ScheduledExecutorService timers) {
    this.pods =
        new Pods(client, settings, Labels.tenant(settings.namespace(), controlToken), defaultImage);
    this.pool = new Pool(pods, poolSize, timers);
    this.startTimeout = startTimeout;
    this.timers = timers;
    pool.start();
  }

  /**
   * The backend on the cluster {@code settings} name: its kubeconfig, else the standard places.
   *
   * @param defaultImage the image of sessions that name none, or null
   * @param poolSize how many warm pods the tenant keeps; 0 for none
   * @param timers runs the deadlines of the agents' links; the backend shuts it down on close
   * @throws IllegalArgumentException when the kubeconfig cannot be read
   */
  public static KubernetesBackend open(
      KubernetesSettings settings,
      String controlToken,
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
        controlToken,
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
          name(), false, "the cluster's API server does not answer: " + rootMessage(e), ENFORCED);
    }
    return new BackendStatus(
        name(),
        true,
        "pods in namespace " + namespace + "; processes through the pods' agents",
        ENFORCED,
        java.util.Set.of(BoxCapabilities.IMAGES, BoxCapabilities.READ_ONLY_ROOTFS));
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    String name = pods.podName(spec.sessionId());
    try {
      Pods.Placed taken = pool.take(spec, name);
      Pods.Placed placed = taken != null ? taken : pods.create(name, spec);
      // From here on the session's pod, which a pool pod is under its own name.
      name = placed.name();
      String pod = name;
      String ip = pods.awaitRunning(pod, startTimeout);
      AgentLink link =
          AgentLink.dial(
              pod,
              new AgentAddress(new InetSocketAddress(ip, PodShape.AGENT_PORT), placed.secret()),
              new LinkDeadlines(REPLY_TIMEOUT, timers));
      try {
        link.awaitAgent(startTimeout, () -> pods.remove(pod));
      } catch (IOException e) {
        link.close();
        throw e;
      }
      return new PodSandbox(pod, link, pods);
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

  /** The message of the deepest cause: fabric8's own names the call, not what went wrong. */
  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == e ? String.valueOf(e.getMessage()) : root.toString();
  }

  @Override
  public void removeOrphans() {
    // Sessions belong to the tenant, not to this replica: another replica may be serving them.
  }

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

  @Override
  public void close() {
    pool.close();
    pods.client().close();
    timers.shutdownNow();
  }
}
