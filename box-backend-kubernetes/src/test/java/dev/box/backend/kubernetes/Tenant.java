package dev.box.backend.kubernetes;

import dev.box.core.backend.Sandbox;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One tenant on a stand-in cluster, for tests: its replicas (backends) and the sandboxes a test
 * keeps; closing destroys those sandboxes, drains the pool, closes the replicas and the cluster.
 */
final class Tenant implements AutoCloseable {
  private final StandInCluster cluster;
  private final List<KubernetesBackend> replicas = new ArrayList<>();
  private final List<Sandbox> kept = new ArrayList<>();

  /** Starts a stand-in cluster on {@code namespace}, its pods' volumes under {@code root}. */
  Tenant(String namespace, Path root) throws IOException, InterruptedException {
    this.cluster = new StandInCluster(namespace, root);
  }

  StandInCluster cluster() {
    return cluster;
  }

  /**
   * A new replica named {@code replica-N} (N the replicas made before it).
   *
   * @param image the sessions' default image, or null
   * @param poolSize how many warm pods it keeps
   */
  KubernetesBackend replica(@Nullable String image, int poolSize, Map<String, String> overrides) {
    KubernetesBackend backend =
        cluster.backend("replica-" + replicas.size(), image, poolSize, overrides);
    replicas.add(backend);
    return backend;
  }

  /** Keeps {@code sandbox}, to destroy on close; from any thread. */
  synchronized Sandbox keep(Sandbox sandbox) {
    kept.add(sandbox);
    return sandbox;
  }

  /** Forgets {@code sandbox}: the test ended it. */
  synchronized void forget(Sandbox sandbox) {
    kept.remove(sandbox);
  }

  @Override
  public synchronized void close() {
    kept.forEach(Sandbox::destroy);
    replicas.forEach(KubernetesBackend::drainPool);
    replicas.forEach(KubernetesBackend::close);
    cluster.close();
  }
}
