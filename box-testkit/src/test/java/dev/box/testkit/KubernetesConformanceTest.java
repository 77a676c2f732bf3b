package dev.box.testkit;

import dev.box.api.internal.FileTrees;
import dev.box.backend.kubernetes.StandInCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The conformance suite against the kubernetes backend on the stand-in cluster of its own tests
 * (the API server stand-in and a kubelet that runs each pod as a container of the local Docker
 * engine, see {@link StandInCluster}): every session a pod, every process through the pod's agent
 * on its pod IP. The backend's objects are the pods of the sandbox namespace.
 *
 * <p>Run on request ({@code BOX_TEST_KUBERNETES_CONFORMANCE=1}) while the backend is being built:
 * 34 of its 35 tests pass; one gap of the backend fails, as docs/KUBERNETES.md lists it: a crashed
 * server's pods stay (no lease yet). The pods run under the repository's seccomp profile ({@link
 * StandInCluster#serverSettings}), which lets network-off sessions make their namespace.
 */
@EnabledIfEnvironmentVariable(named = "BOX_TEST_KUBERNETES_CONFORMANCE", matches = "1")
class KubernetesConformanceTest extends BackendConformanceSuite {
  private static final String NAMESPACE = "box-sandboxes";
  private static @Nullable Path root;
  private static @Nullable StandInCluster cluster;
  private static @Nullable Path kubeconfig;

  /**
   * The cluster, started on first use: the suite asks for the server's settings before the
   * subclass's own set-up runs.
   */
  private static synchronized StandInCluster cluster() {
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
    return cluster;
  }

  @AfterAll
  static synchronized void stopCluster() throws IOException {
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
    Map<String, String> settings = new HashMap<>(cluster().serverSettings());
    settings.put("k8s_kubeconfig", String.valueOf(kubeconfig));
    settings.put("image", StandInCluster.IMAGE);
    return settings;
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    cluster()
        .client()
        .pods()
        .inNamespace(NAMESPACE)
        .list()
        .getItems()
        .forEach(p -> found.add("pod " + p.getMetadata().getName()));
    return found;
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    try {
      StandInCluster.killContainer(backendSessionId);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
