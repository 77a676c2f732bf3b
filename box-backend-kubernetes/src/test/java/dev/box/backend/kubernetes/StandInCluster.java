package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;

/**
 * A cluster for tests: the API server stand-in and the stand-in kubelet on its sandbox namespace,
 * with the images that {@code scripts/engines up} and {@code scripts/agent-image} provide.
 */
public final class StandInCluster implements AutoCloseable {
  /** The sessions' image. */
  public static final String IMAGE =
      System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm");

  /** The pods' agent image. */
  public static final String AGENT_IMAGE =
      System.getenv().getOrDefault("BOX_TEST_AGENT_IMAGE", "box-agent:latest");

  /** The label that names a pod's tenant. */
  public static final String TENANT_LABEL = Labels.TENANT;

  private final ApiServer server = new ApiServer();
  private final KubernetesClient client = server.client();
  private final String namespace;
  private final StandInKubelet kubelet;

  /**
   * Starts the cluster, its kubelet watching {@code namespace}.
   *
   * @param root a directory for the pods' volumes
   */
  public StandInCluster(String namespace, Path root) throws IOException, InterruptedException {
    this.namespace = namespace;
    this.kubelet = new StandInKubelet(client, namespace, root);
    server.serveExec(
        (ns, pod, container, command) -> {
          List<String> argv = new ArrayList<>(List.of("exec", "-i", StandInKubelet.container(pod)));
          argv.addAll(command);
          return Docker.start(argv);
        });
    kubelet.awaitSynced();
  }

  /** The cluster's client (closed with the cluster). */
  public KubernetesClient client() {
    return client;
  }

  /** A client of its own, for a backend that closes it. */
  KubernetesClient newClient() {
    return server.client();
  }

  /**
   * A backend on this cluster with {@code overrides} over its settings, as one replica of one
   * tenant (lease 30 s), with no default image and no pool.
   */
  KubernetesBackend backend(Map<String, String> overrides) {
    return backend("instance", null, 0, overrides);
  }

  /**
   * A backend on this cluster as replica {@code instanceId} of one tenant (lease 30 s): every
   * backend this method makes serves the same sessions.
   *
   * @param image the sessions' default image, or null
   * @param poolSize how many warm pods the tenant keeps
   */
  KubernetesBackend backend(
      String instanceId, @Nullable String image, int poolSize, Map<String, String> overrides) {
    Map<String, String> settings = new HashMap<>(serverSettings());
    settings.putAll(overrides);
    return new KubernetesBackend(
        KubernetesSettings.read(settings),
        newClient(),
        new Replica(instanceId, "control-token", Duration.ofSeconds(30), Clock.systemUTC()),
        image,
        poolSize,
        Duration.ofSeconds(90),
        Executors.newSingleThreadScheduledExecutor());
  }

  /** The backend's settings for this cluster: its namespace, the agent image, no pulls. */
  KubernetesSettings settings() {
    return KubernetesSettings.read(serverSettings());
  }

  /**
   * The server's settings ({@code k8s_*}) for this cluster, without the kubeconfig: the pods run
   * under the repository's seccomp profile, which lets network-off sessions make their namespace.
   */
  public Map<String, String> serverSettings() {
    return Map.of(
        "k8s_namespace",
        namespace,
        "k8s_agent_image",
        AGENT_IMAGE,
        "k8s_image_pull_policy",
        "Never",
        "k8s_seccomp_profile",
        "localhost/box-sandbox.json");
  }

  /** Writes a kubeconfig for this cluster to {@code file}, for a server that reads one. */
  public Path writeKubeconfig(Path file) throws IOException {
    return server.writeKubeconfig(file);
  }

  /**
   * The tenant of the servers of {@code controlToken} on {@code namespace}, as its pods name it.
   */
  public static String tenant(String namespace, String controlToken) {
    return Labels.tenant(namespace, controlToken);
  }

  /** Whether the container of pod {@code pod} is gone (or never was). */
  public static boolean containerGone(String pod) throws IOException {
    return StandInKubelet.containerGone(pod);
  }

  /** Kills the container of pod {@code pod}, as a node that loses it would. */
  public static void killContainer(String pod) throws IOException {
    Docker.run(java.util.List.of("kill", StandInKubelet.container(pod)));
  }

  @Override
  public void close() {
    kubelet.close();
    client.close();
    server.close();
  }
}
