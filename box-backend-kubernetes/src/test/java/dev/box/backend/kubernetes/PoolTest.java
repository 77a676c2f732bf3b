package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.SandboxShape;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The warm pool on the stand-in cluster: a create of the pooled shape takes a running pool pod
 * instead of making one, the pool refills behind it, and concurrent creates (on one replica or two)
 * never share a pod nor make two for one session. Needs the Docker engine, the test image and the
 * agent image.
 */
class PoolTest {
  private static final String NS = "box-sandboxes";
  private static final String TOKEN = "control-token";

  @TempDir Path root;
  private Tenant tenant;
  private StandInCluster cluster;

  @BeforeEach
  void start() throws Exception {
    tenant = new Tenant(NS, root);
    cluster = tenant.cluster();
  }

  @AfterEach
  void stop() {
    tenant.close();
  }

  /** A replica of the tenant, keeping {@code size} warm pods. */
  private KubernetesBackend replica(int size) {
    return tenant.replica(StandInCluster.IMAGE, size, Map.of());
  }

  /** A spec of the pooled shape, as a request that names nothing gets. */
  private static SandboxSpec pooled(String session) {
    return SandboxShape.pooled()
        .spec(session, "instance", BoxSpec.DEFAULT_IMAGE, Path.of(BoxSpec.DEFAULT_MOUNT_PATH));
  }

  /** The names of the running free pool pods, once there are {@code count}. */
  private Set<String> awaitFree(int count) {
    Supplier<Set<String>> free =
        () ->
            cluster
                .client()
                .pods()
                .inNamespace(NS)
                .withLabel(Pool.LABEL, Pool.FREE)
                .list()
                .getItems()
                .stream()
                .filter(Pods::isReady)
                .map(p -> p.getMetadata().getName())
                .collect(Collectors.toSet());
    await().atMost(Duration.ofSeconds(120)).until(() -> free.get().size() >= count);
    return free.get();
  }

  private Sandbox started(KubernetesBackend backend, String session) {
    return tenant.keep(backend.start(pooled(session)));
  }

  /** The pods that serve session {@code session}. */
  private List<String> podsOf(String session) {
    return cluster.client().pods().inNamespace(NS).list().getItems().stream()
        .filter(
            p ->
                p.getMetadata().getAnnotations() != null
                    && session.equals(p.getMetadata().getAnnotations().get(Labels.SESSION_ID)))
        .map(p -> p.getMetadata().getName())
        .toList();
  }

  @Test
  void aCreateOfThePooledShape_takesAWarmPod_andThePoolRefillsBehind() throws Exception {
    KubernetesBackend backend = replica(2);
    Set<String> warm = awaitFree(2);

    Sandbox sandbox = started(backend, "warm");

    assertThat(warm).contains(sandbox.id());
    assertThat(KubernetesBackendTest.run(sandbox, "id -u; echo hi > f; cat f"))
        .isEqualTo("1000\nhi\n");
    String record = Labels.podName(Labels.tenant(NS, TOKEN), "warm");
    assertThat(cluster.client().pods().inNamespace(NS).withName(record).get())
        .as("no pod of its own")
        .isNull();
    assertThat(
            cluster
                .client()
                .secrets()
                .inNamespace(NS)
                .withName(record)
                .get()
                .getMetadata()
                .getLabels())
        .containsEntry(Labels.POD, sandbox.id());
    Pod taken = cluster.client().pods().inNamespace(NS).withName(sandbox.id()).get();
    assertThat(taken.getMetadata().getLabels()).doesNotContainKey(Pool.LABEL);
    assertThat(taken.getMetadata().getAnnotations()).containsEntry(Labels.SESSION_ID, "warm");
    assertThat(awaitFree(2)).doesNotContain(sandbox.id());
    assertThat(backend.poolLevel()).isNotNull();

    tenant.forget(sandbox);
    sandbox.destroy();
    assertThat(cluster.client().pods().inNamespace(NS).withName(sandbox.id()).get()).isNull();
    assertThat(cluster.client().secrets().inNamespace(NS).withName(record).get()).isNull();
    assertThat(cluster.client().secrets().inNamespace(NS).withName(sandbox.id()).get()).isNull();
    assertThat(
            cluster
                .client()
                .network()
                .networkPolicies()
                .inNamespace(NS)
                .withName(sandbox.id())
                .get())
        .isNull();
  }

  @Test
  void aSpecOfAnotherShape_getsAPodOfItsOwn() {
    KubernetesBackend backend = replica(1);
    awaitFree(1);
    SandboxSpec base = pooled("own");
    SandboxSpec persistent =
        new SandboxSpec(
            base.sessionId(),
            base.sandboxName(),
            base.instanceId(),
            base.image(),
            base.network(),
            base.workspace(),
            base.extraMounts(),
            base.readOnlyRootfs(),
            base.cpus(),
            base.memoryMb(),
            base.pidsLimit(),
            base.egress(),
            true,
            null);

    Sandbox sandbox = backend.start(persistent);
    tenant.keep(sandbox);

    assertThat(sandbox.id()).isEqualTo(Labels.podName(Labels.tenant(NS, TOKEN), "own"));
  }

  @Test
  void concurrentCreatesOfDifferentSessions_neverTakeTheSamePod() throws Exception {
    KubernetesBackend backend = replica(2);

    List<Sandbox> started = atOnce(backend, "one", backend, "two");

    assertThat(started.get(0).id()).isNotEqualTo(started.get(1).id());
    assertThat(podsOf("one")).containsExactly(started.get(0).id());
    assertThat(podsOf("two")).containsExactly(started.get(1).id());
  }

  @Test
  void twoReplicasCreatingOneSessionAtOnce_yieldOnePod() throws Exception {
    List<Sandbox> started = atOnce(replica(2), "same", replica(2), "same");

    assertThat(started.get(0).id()).isEqualTo(started.get(1).id());
    assertThat(podsOf("same")).containsExactly(started.get(0).id());
    assertThat(KubernetesBackendTest.run(started.get(1), "echo both")).isEqualTo("both\n");
    tenant.forget(started.get(1));
    ((PodSandbox) started.get(1)).link().close();
  }

  @Test
  void drainingThePool_removesTheFreePods_andStopsRefillingIt() {
    KubernetesBackend backend = replica(2);
    Set<String> warm = awaitFree(2);

    backend.drainPool();

    for (String pod : warm) {
      assertThat(cluster.client().pods().inNamespace(NS).withName(pod).get()).isNull();
      assertThat(cluster.client().secrets().inNamespace(NS).withName(pod).get()).isNull();
    }
    assertThat(cluster.client().pods().inNamespace(NS).withLabel(Pool.LABEL).list().getItems())
        .isEmpty();
  }

  /**
   * Once two pool pods run, starts session {@code a} on {@code onA} and {@code b} on {@code onB} at
   * once, and returns their sandboxes in that order.
   */
  private List<Sandbox> atOnce(KubernetesBackend onA, String a, KubernetesBackend onB, String b)
      throws Exception {
    awaitFree(2);
    CountDownLatch go = new CountDownLatch(1);
    List<CompletableFuture<Sandbox>> futures = new ArrayList<>();
    List<Supplier<Sandbox>> starts = List.of(() -> started(onA, a), () -> started(onB, b));
    for (Supplier<Sandbox> s : starts) {
      futures.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                return s.get();
              }));
    }
    go.countDown();
    List<Sandbox> results = new ArrayList<>();
    for (CompletableFuture<Sandbox> f : futures) {
      results.add(f.get());
    }
    return results;
  }
}
