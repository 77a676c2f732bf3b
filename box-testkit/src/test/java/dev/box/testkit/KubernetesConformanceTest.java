package dev.box.testkit;

import dev.box.api.internal.FileTrees;
import dev.box.backend.kubernetes.StandInCluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;

/**
 * The conformance suite against the kubernetes backend on the stand-in cluster of its own tests
 * (the API server stand-in and a kubelet that runs each pod as a container of the local Docker
 * engine, see {@link StandInCluster}): every session a pod, every process through the pod's agent
 * on its pod IP. The backend's objects are the pods of the sandbox namespace.
 *
 * <p>The pods run under the repository's seccomp profile ({@link StandInCluster#serverSettings}),
 * which lets network-off sessions make their namespace.
 *
 * <p>On a real cluster ({@code scripts/k8s-conformance}): {@code BOX_TEST_KUBECONFIG} names its
 * kubeconfig, {@code BOX_TEST_K8S_NAMESPACE} the sandbox namespace (default {@code box-sandboxes}),
 * {@code BOX_TEST_IMAGE} and {@code BOX_TEST_AGENT_IMAGE} the images its nodes pull. No stand-in
 * starts; the servers use a control token of this run, so the backend's objects are the pods of
 * that tenant, and a sandbox is killed from outside by deleting its pod with no grace period.
 */
class KubernetesConformanceTest extends BackendConformanceSuite {
  private static final @Nullable String EXTERNAL_KUBECONFIG = System.getenv("BOX_TEST_KUBECONFIG");
  private static final String NAMESPACE =
      EXTERNAL_KUBECONFIG == null
          ? "box-sandboxes"
          : System.getenv().getOrDefault("BOX_TEST_K8S_NAMESPACE", "box-sandboxes");

  /** The control token of this run's servers on a real cluster, whose tenant owns the pods. */
  private static final String TOKEN = HexFormat.of().formatHex(randomBytes());

  private static @Nullable Path root;
  private static @Nullable StandInCluster cluster;
  private static @Nullable KubernetesClient external;
  private static @Nullable Path kubeconfig;

  /**
   * The cluster's client, the stand-in started on first use: the suite asks for the server's
   * settings before the subclass's own set-up runs.
   */
  private static synchronized KubernetesClient client() {
    if (EXTERNAL_KUBECONFIG != null) {
      if (external == null) {
        kubeconfig = Path.of(EXTERNAL_KUBECONFIG);
        external =
            new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(new File(EXTERNAL_KUBECONFIG)))
                .build();
      }
      return external;
    }
    if (cluster == null) {
      try {
        root = Files.createTempDirectory("box-k8s-conformance");
        cluster = new StandInCluster(NAMESPACE, root);
        kubeconfig = cluster.writeKubeconfig(root.resolve("kubeconfig"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    return cluster.client();
  }

  @AfterAll
  static synchronized void stopCluster() throws IOException {
    if (external != null) {
      external.close();
      external = null;
    }
    if (cluster != null) {
      cluster.close();
      cluster = null;
    }
    if (root != null) {
      FileTrees.deleteTree(root);
    }
  }

  /**
   * A session's pod is named by its tenant and id, so the next server (or any replica) serves the
   * running pod of a persistent session.
   */
  @Override
  protected boolean adoptsAfterACrash() {
    return true;
  }

  @Override
  protected String backendName() {
    return "kubernetes";
  }

  @Override
  protected Map<String, String> serverSettings() {
    client();
    Map<String, String> settings = new HashMap<>();
    if (cluster != null) {
      settings.putAll(cluster.serverSettings());
    } else {
      settings.put("k8s_namespace", NAMESPACE);
      settings.put("k8s_agent_image", StandInCluster.AGENT_IMAGE);
      settings.put("control_token", TOKEN);
    }
    settings.put("k8s_kubeconfig", String.valueOf(kubeconfig));
    settings.put("image", StandInCluster.IMAGE);
    // A crashed server's sessions go once their lease runs out: the shortest, for the suite's
    // waits.
    settings.put("sandbox_lease_sec", "3");
    return settings;
  }

  @Override
  protected Set<String> leftovers() {
    // The pool's free pods (pool_size) are no session's: a create takes one and the pool refills.
    var pods = client().pods().inNamespace(NAMESPACE).withoutLabel("box.dev/pool");
    List<Pod> items =
        cluster != null
            ? pods.list().getItems()
            : pods.withLabel(StandInCluster.TENANT_LABEL, StandInCluster.tenant(NAMESPACE, TOKEN))
                .list()
                .getItems();
    Set<String> found = new TreeSet<>();
    items.forEach(p -> found.add("pod " + p.getMetadata().getName()));
    return found;
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    if (cluster != null) {
      try {
        StandInCluster.killContainer(backendSessionId);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return;
    }
    var pod = client().pods().inNamespace(NAMESPACE).withName(backendSessionId);
    pod.withGracePeriod(0).delete();
    pod.waitUntilCondition(p -> p == null, 60, TimeUnit.SECONDS);
  }

  private static byte[] randomBytes() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return bytes;
  }
}
