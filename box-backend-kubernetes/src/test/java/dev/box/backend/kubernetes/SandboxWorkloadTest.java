package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxSpec;
import dev.box.core.backend.Sandbox;
import dev.box.sandbox.SandboxShape;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions as agent-sandbox Sandboxes ({@code k8s_workload=sandbox}) on the stand-in cluster, with
 * the stand-in for agent-sandbox's controller making each Sandbox's pod: the pod is the one Box
 * makes in the default mode, its processes run through its agent, a delete leaves nothing, the
 * pool's pods are Sandboxes too, and a server refuses to start where the Sandbox kind is not
 * served. Needs the Docker engine, the test image and the agent image.
 */
class SandboxWorkloadTest {
  private static final String NS = "box-sandboxes";
  private static final Map<String, String> SANDBOX_MODE = Map.of("k8s_workload", "sandbox");

  @TempDir Path root;
  private StandInCluster cluster;
  private StandInSandboxController controller;
  private KubernetesClient client;
  private final List<KubernetesBackend> backends = new ArrayList<>();
  private @Nullable Sandbox sandbox;

  @BeforeEach
  void start() throws Exception {
    cluster = new StandInCluster(NS, root);
    client = cluster.client();
    controller = new StandInSandboxController(client, NS);
  }

  @AfterEach
  void stop() {
    if (sandbox != null) {
      sandbox.destroy();
      sandbox.removeWorkspace();
    }
    backends.forEach(KubernetesBackend::drainPool);
    backends.forEach(KubernetesBackend::close);
    controller.close();
    cluster.close();
  }

  private KubernetesBackend backend(int poolSize) {
    KubernetesBackend backend =
        cluster.backend("replica-" + backends.size(), StandInCluster.IMAGE, poolSize, SANDBOX_MODE);
    backends.add(backend);
    return backend;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> field(@Nullable Object map, String key) {
    return Objects.requireNonNull(
        (Map<String, Object>) Objects.requireNonNull((Map<String, Object>) map).get(key));
  }

  @Test
  void aSessionIsASandbox_whosePodTheControllerMakes_asBoxWouldMakeIt() throws Exception {
    KubernetesBackend backend = backend(0);
    sandbox = backend.start(KubernetesBackendTest.spec("s1"));
    String name = sandbox.id();

    assertThat(KubernetesBackendTest.run(sandbox, "id -u; echo hi > f; cat f; pwd"))
        .isEqualTo("1000\nhi\n/workspace\n");
    GenericKubernetesResource made = Objects.requireNonNull(controller.sandbox(name));
    assertThat(made.getApiVersion()).isEqualTo("agents.x-k8s.io/v1beta1");
    Pod pod = client.pods().inNamespace(NS).withName(name).get();
    assertThat(pod.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Sandbox");
              assertThat(o.getUid()).isEqualTo(made.getMetadata().getUid());
              assertThat(o.getController()).isTrue();
            });
    Pods pods = new Pods(client, cluster.settings(), Labels.tenant(NS, "control-token"), null);
    assertThat(pod.getMetadata().getLabels())
        .containsAllEntriesOf(pods.labels(name))
        .containsKey(StandInSandboxController.NAME_HASH);
    assertThat(pod.getMetadata().getAnnotations()).containsEntry(Labels.SESSION_ID, "s1");
    Map<String, Object> template = field(made.getAdditionalProperties().get("spec"), "podTemplate");
    assertThat(
            client.getKubernetesSerialization().convertValue(template.get("spec"), PodSpec.class))
        .as("the template's spec is the pod's")
        .isEqualTo(pod.getSpec());
    assertThat(backend.status().reason()).contains("agent-sandbox Sandboxes");
  }

  @Test
  void deletingASession_leavesNoSandboxPodSecretOrPolicy() throws Exception {
    Sandbox s = backend(0).start(KubernetesBackendTest.spec("s2"));
    String name = s.id();

    s.destroy();

    assertThat(controller.sandbox(name)).isNull();
    assertThat(client.secrets().inNamespace(NS).withName(name).get()).isNull();
    assertThat(client.network().networkPolicies().inNamespace(NS).withName(name).get()).isNull();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                client.pods().inNamespace(NS).withName(name).get() == null
                    && StandInKubelet.containerGone(name));
  }

  @Test
  void aPersistentSession_isServedByTheNextServer_andItsFilesOutliveAKillOfItsPod()
      throws Exception {
    Sandbox first = backend(0).start(KubernetesBackendTest.spec("kept", true));
    KubernetesBackendTest.run(first, "echo still-here > note");
    String name = first.id();
    first.release();

    Sandbox adopted =
        Objects.requireNonNull(backend(0).adopt(KubernetesBackendTest.spec("kept", true)));
    assertThat(KubernetesBackendTest.run(adopted, "cat note")).isEqualTo("still-here\n");

    StandInCluster.killContainer(name);
    await().atMost(Duration.ofSeconds(60)).until(() -> !adopted.isAlive());
    adopted.destroy();
    assertThat(client.persistentVolumeClaims().inNamespace(NS).list().getItems())
        .as("the claim outlives the Sandbox")
        .extracting(c -> c.getMetadata().getName())
        .containsExactly(name + Pods.CLAIM_SUFFIX);
    sandbox = backends.getLast().start(KubernetesBackendTest.spec("kept", true));

    assertThat(controller.sandbox(sandbox.id())).isNotNull();
    assertThat(KubernetesBackendTest.run(sandbox, "cat note")).isEqualTo("still-here\n");
  }

  @Test
  void thePoolsPodsAreSandboxes_andACreateTakesOneByPatchingIt() throws Exception {
    KubernetesBackend backend = backend(1);
    await()
        .atMost(Duration.ofSeconds(120))
        .until(() -> backend.poolLevel() != null && backend.poolLevel().idle() >= 1);
    assertThat(client.pods().inNamespace(NS).withLabel(Pool.LABEL, Pool.FREE).list().getItems())
        .as("a free pool pod is labelled as in the default mode")
        .hasSize(1);

    sandbox =
        backend.start(
            SandboxShape.pooled()
                .spec(
                    "warm",
                    "instance",
                    BoxSpec.DEFAULT_IMAGE,
                    Path.of(BoxSpec.DEFAULT_MOUNT_PATH)));

    assertThat(sandbox.id()).startsWith("box-pool-");
    GenericKubernetesResource made = Objects.requireNonNull(controller.sandbox(sandbox.id()));
    assertThat(made.getMetadata().getLabels()).doesNotContainKey(Pool.LABEL);
    assertThat(field(made.getAdditionalProperties().get("spec"), "podTemplate"))
        .extracting(t -> field(t, "metadata"))
        .extracting(m -> field(m, "labels"))
        .satisfies(labels -> assertThat(labels).doesNotContainKey(Pool.LABEL));
    assertThat(made.getMetadata().getAnnotations()).containsEntry(Labels.SESSION_ID, "warm");
    assertThat(KubernetesBackendTest.run(sandbox, "echo hi")).isEqualTo("hi\n");
    String taken = sandbox.id();
    await()
        .atMost(Duration.ofSeconds(60))
        .alias("the controller takes the label off the pod")
        .until(
            () ->
                !client
                    .pods()
                    .inNamespace(NS)
                    .withName(taken)
                    .get()
                    .getMetadata()
                    .getLabels()
                    .containsKey(Pool.LABEL));
    await()
        .atMost(Duration.ofSeconds(120))
        .until(
            () ->
                client
                        .genericKubernetesResources(AgentSandboxes.SANDBOX)
                        .inNamespace(NS)
                        .withLabel(Pool.LABEL, Pool.FREE)
                        .list()
                        .getItems()
                        .size()
                    == 1);
  }

  /**
   * A backend in sandbox mode on a bare mock API server, which answers 404 to every request (as an
   * API server does for a kind whose CRD is not installed) but those {@code expect} scripts.
   */
  private static void refused(
      java.util.function.Consumer<KubernetesMockServer> expect, String message) {
    KubernetesMockServer bare = new KubernetesMockServer(false);
    expect.accept(bare);
    bare.init(InetAddress.getLoopbackAddress(), 0);
    try (KubernetesClient none = bare.createClient()) {
      assertThatThrownBy(
              () ->
                  new KubernetesBackend(
                      KubernetesSettings.read(SANDBOX_MODE),
                      none,
                      new Replica("r", "control-token", Duration.ofSeconds(30), Clock.systemUTC()),
                      null,
                      0,
                      Duration.ofSeconds(10),
                      Executors.newSingleThreadScheduledExecutor()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("k8s_workload=sandbox")
          .hasMessageContaining("sandboxes.agents.x-k8s.io")
          .hasMessageContaining(message);
    } finally {
      bare.destroy();
    }
  }

  @Test
  void aServerRefusesToStart_whereTheSandboxKindIsNotServed() {
    refused(bare -> {}, "install its CRD");
  }

  @Test
  void aServerRefusesToStart_whereTheRoleDoesNotGrantTheNamespacedList() {
    refused(
        bare ->
            bare.expect()
                .get()
                .withPath("/apis/agents.x-k8s.io/v1beta1/namespaces/" + NS + "/sandboxes?limit=1")
                .andReturn(403, "{\"kind\":\"Status\",\"code\":403}")
                .always(),
        "may not list");
  }

  @Test
  void theWorkloadSetting_isPodOrSandbox() {
    assertThat(KubernetesSettings.defaults().workload()).isEqualTo(KubernetesSettings.Workload.POD);
    assertThat(KubernetesSettings.read(SANDBOX_MODE).workload())
        .isEqualTo(KubernetesSettings.Workload.SANDBOX);
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_workload", "sandboxclaim")))
        .hasMessageContaining("k8s_workload");
  }
}
