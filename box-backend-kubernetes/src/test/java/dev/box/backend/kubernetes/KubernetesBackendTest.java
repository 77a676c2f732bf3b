package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend end to end on the stand-in cluster: the API server stand-in stores the session's
 * Secret, NetworkPolicy and pod, the stand-in kubelet runs the pod as a real container (its init
 * container copying the agent from the agent image that {@code scripts/agent-image} builds), and
 * the backend's processes run through the pod's agent on its pod IP. Needs the Docker engine, the
 * test image and the agent image.
 */
class KubernetesBackendTest {
  private static final String NS = "box-sandboxes";

  @TempDir Path root;
  private StandInCluster cluster;
  private KubernetesClient client;
  private KubernetesBackend backend;
  private @Nullable Sandbox sandbox;

  @BeforeEach
  void start() throws Exception {
    cluster = new StandInCluster(NS, root);
    client = cluster.client();
    backend = cluster.backend(Map.of());
  }

  @AfterEach
  void stop() {
    if (sandbox != null) {
      sandbox.destroy();
    }
    backend.close();
    cluster.close();
  }

  static SandboxSpec spec(String session) {
    return spec(session, false);
  }

  static SandboxSpec spec(String session, boolean persistent) {
    return new SandboxSpec(
        session,
        "unused",
        "instance",
        StandInCluster.IMAGE,
        BoxNetworkMode.OFF,
        null,
        List.of(),
        true,
        1,
        256,
        64,
        BoxEgress.NONE,
        persistent,
        null);
  }

  static String run(Sandbox sandbox, String script) throws Exception {
    SandboxProcess p =
        sandbox.spawn(
            new ProcessSpec(new ProcessSpec.Shell(script), "/workspace", Map.of(), false));
    String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(Duration.ofSeconds(30))).hasValue(0);
    return out;
  }

  @Test
  void aSessionIsAPod_whoseProcessesRunThroughItsAgent_asTheSandboxUser() throws Exception {
    sandbox = backend.start(spec("s1"));

    assertThat(run(sandbox, "id -u; echo hi > f; cat f; pwd; touch /etc/x 2>/dev/null || echo ro"))
        .isEqualTo("1000\nhi\n/workspace\nro\n");
    String pod = sandbox.id();
    assertThat(client.pods().inNamespace(NS).withName(pod).get().getMetadata().getAnnotations())
        .containsEntry(Labels.SESSION_ID, "s1");
    assertThat(client.secrets().inNamespace(NS).withName(pod).get()).isNotNull();
    assertThat(client.network().networkPolicies().inNamespace(NS).withName(pod).get()).isNotNull();
    assertThat(client.persistentVolumeClaims().inNamespace(NS).list().getItems())
        .as("an ephemeral session has no claim")
        .isEmpty();
    assertThat(workspace(pod).getEmptyDir()).isNotNull();
  }

  private Volume workspace(String pod) {
    return client.pods().inNamespace(NS).withName(pod).get().getSpec().getVolumes().stream()
        .filter(v -> v.getName().equals("workspace"))
        .findFirst()
        .orElseThrow();
  }

  /** Starts the persistent session {@code session} and writes {@code note} in its workspace. */
  private Sandbox persistentWithANote(String session) throws Exception {
    Sandbox started = backend.start(spec(session, true));
    run(started, "echo still-here > note");
    return started;
  }

  @Test
  void aPersistentSessionsFiles_outliveItsPodsDeletion_andTheNextStartFindsThemOnItsClaim()
      throws Exception {
    Sandbox first = persistentWithANote("kept");
    sandbox = first;
    String pod = first.id();
    assertThat(workspace(pod).getPersistentVolumeClaim().getClaimName())
        .isEqualTo(pod + "-workspace");
    PersistentVolumeClaim claim =
        client.persistentVolumeClaims().inNamespace(NS).withName(pod + "-workspace").get();
    assertThat(claim.getSpec().getAccessModes()).containsExactly("ReadWriteOnce");
    assertThat(claim.getSpec().getResources().getRequests().get("storage"))
        .isEqualTo(new Quantity(Pods.WORKSPACE_MB + "Mi"));
    String uid = client.pods().inNamespace(NS).withName(pod).get().getMetadata().getUid();

    client.pods().inNamespace(NS).withName(pod).withGracePeriod(0).delete();
    await().atMost(Duration.ofSeconds(60)).until(() -> StandInKubelet.containerGone(pod));
    await().atMost(Duration.ofSeconds(60)).until(() -> !first.isAlive());
    ((PodSandbox) first).link().close();
    sandbox = backend.start(spec("kept", true));

    assertThat(sandbox.id()).isEqualTo(pod);
    assertThat(client.pods().inNamespace(NS).withName(pod).get().getMetadata().getUid())
        .isNotEqualTo(uid);
    assertThat(run(sandbox, "cat note")).isEqualTo("still-here\n");
  }

  @Test
  void aPersistentSessionsFiles_outliveAKillOfItsPod_inThePodThatReplacesIt() throws Exception {
    Sandbox first = persistentWithANote("killed");
    String pod = first.id();

    StandInCluster.killContainer(pod);
    await().atMost(Duration.ofSeconds(60)).until(() -> !first.isAlive());
    first.destroy();
    assertThat(client.persistentVolumeClaims().inNamespace(NS).withName(pod + "-workspace").get())
        .as("the claim outlives the pod")
        .isNotNull();
    sandbox = backend.start(spec("killed", true));

    assertThat(run(sandbox, "cat note")).isEqualTo("still-here\n");
  }

  @Test
  void deletingAPersistentSession_removesItsClaim_andTheVolumeGoesWithIt() throws Exception {
    Sandbox s = persistentWithANote("deleted");
    String pod = s.id();
    Path volume = StandInKubelet.claimDir(root, pod + "-workspace");
    assertThat(volume.resolve("note")).exists();

    s.destroy();
    s.removeWorkspace();

    assertThat(client.persistentVolumeClaims().inNamespace(NS).withName(pod + "-workspace").get())
        .isNull();
    assertThat(client.secrets().inNamespace(NS).withName(pod).get()).isNull();
    await().atMost(Duration.ofSeconds(60)).until(() -> !Files.exists(volume));
  }

  @Test
  void killingAProcessTreeEndsItInThePod_andTheSandboxGoesOn() throws Exception {
    sandbox = backend.start(spec("s2"));
    SandboxProcess p =
        sandbox.spawn(
            new ProcessSpec(
                new ProcessSpec.Shell("sleep 1000 & setsid sleep 1000 & echo started; wait"),
                "/workspace",
                Map.of(),
                false));
    assertThat(new String(p.stdout().readNBytes(8), StandardCharsets.UTF_8)).isEqualTo("started\n");

    p.killTree();

    assertThat(p.waitFor(Duration.ofSeconds(30))).isPresent();
    assertThat(run(sandbox, "ps -eo comm | grep -c '^sleep' || true")).isEqualTo("0\n");
  }

  @Test
  void destroyRemovesThePodItsSecretAndItsPolicy() throws Exception {
    Sandbox s = backend.start(spec("s3"));
    String pod = s.id();

    s.destroy();

    assertThat(client.pods().inNamespace(NS).withName(pod).get()).isNull();
    assertThat(client.secrets().inNamespace(NS).withName(pod).get()).isNull();
    assertThat(client.network().networkPolicies().inNamespace(NS).withName(pod).get()).isNull();
    await().atMost(Duration.ofSeconds(60)).until(() -> StandInKubelet.containerGone(pod));
  }
}
