package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stand-in kubelet runs what a pod says, as the pod says: its user, its Secret as a file of the
 * pod's group, its IP written back, its container gone with the pod. Needs the Docker engine and
 * the test image that {@code scripts/engines up} provides.
 */
class StandInKubeletTest {
  private static final String NS = "sandboxes";

  @TempDir Path root;
  private StandInCluster cluster;
  private KubernetesClient client;

  @BeforeEach
  void start() throws Exception {
    cluster = new StandInCluster(NS, root);
    client = cluster.client();
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void aPodRunsAsItsUser_withItsSecret_andGoesWithItsDeletion() throws Exception {
    client
        .secrets()
        .inNamespace(NS)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("p1")
                .endMetadata()
                .withData(
                    Map.of(
                        "token",
                        Base64.getEncoder()
                            .encodeToString("s3cret".getBytes(StandardCharsets.UTF_8))))
                .build())
        .create();
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("p1")
            .endMetadata()
            .withNewSpec()
            .withNewSecurityContext()
            .withFsGroup(1000L)
            .endSecurityContext()
            .addNewContainer()
            .withName("main")
            .withImage(StandInCluster.IMAGE)
            .withCommand("sleep", "infinity")
            .withNewSecurityContext()
            .withRunAsUser(1000L)
            .withRunAsGroup(1000L)
            .withReadOnlyRootFilesystem(true)
            .withAllowPrivilegeEscalation(false)
            .withNewCapabilities()
            .withDrop("ALL")
            .endCapabilities()
            .endSecurityContext()
            .addNewVolumeMount()
            .withName("secret")
            .withMountPath("/run/secret")
            .withReadOnly(true)
            .endVolumeMount()
            .addNewVolumeMount()
            .withName("work")
            .withMountPath("/work")
            .endVolumeMount()
            .endContainer()
            .addNewVolume()
            .withName("secret")
            .withNewSecret()
            .withSecretName("p1")
            .endSecret()
            .endVolume()
            .addNewVolume()
            .withName("work")
            .withNewEmptyDir()
            .endEmptyDir()
            .endVolume()
            .endSpec()
            .build();
    client.pods().inNamespace(NS).resource(pod).create();

    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              Pod p = client.pods().inNamespace(NS).withName("p1").get();
              return p.getStatus() != null && "Running".equals(p.getStatus().getPhase());
            });
    Pod running = client.pods().inNamespace(NS).withName("p1").get();
    assertThat(running.getStatus().getPodIP()).startsWith("10.244.0.");
    String container = StandInKubelet.container("p1");
    assertThat(
            Docker.run(
                List.of(
                    "exec",
                    container,
                    "sh",
                    "-c",
                    "id -u; cat /run/secret/token; echo; touch /work/x && echo writable;"
                        + " touch /etc/x 2>/dev/null || echo read-only")))
        .isEqualTo("1000\ns3cret\nwritable\nread-only\n");

    client.pods().inNamespace(NS).withName("p1").delete();
    await().atMost(Duration.ofSeconds(60)).until(() -> StandInKubelet.containerGone("p1"));
  }
}
