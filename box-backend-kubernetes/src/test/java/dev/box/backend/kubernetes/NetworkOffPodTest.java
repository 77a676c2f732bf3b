package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxException;
import dev.box.core.backend.Sandbox;
import java.nio.file.Path;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A network-off session on the stand-in cluster: under the repository's seccomp profile its
 * processes run in a network namespace of their own with only loopback, while the agent is reached
 * on the pod IP; under the runtime's default profile, which refuses the namespace, the session does
 * not start, and the error says why and how to fix it. Needs the Docker engine, the test image and
 * the agent image.
 */
class NetworkOffPodTest {
  private static final String NS = "box-sandboxes";

  @TempDir Path root;
  private StandInCluster cluster;
  private @Nullable KubernetesBackend backend;
  private @Nullable Sandbox sandbox;

  @BeforeEach
  void start() throws Exception {
    cluster = new StandInCluster(NS, root);
  }

  @AfterEach
  void stop() {
    if (sandbox != null) {
      sandbox.destroy();
    }
    if (backend != null) {
      backend.close();
    }
    cluster.close();
  }

  private KubernetesBackend backend(Map<String, String> overrides) {
    KubernetesBackend started = cluster.backend(overrides);
    backend = started;
    return started;
  }

  @Test
  void theSessionsProcessesSeeOnlyLoopback_andCannotJoinTheAgentsNetwork() throws Exception {
    Sandbox started = backend(Map.of()).start(KubernetesBackendTest.spec("off1"));
    sandbox = started;

    assertThat(
            KubernetesBackendTest.run(
                started, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"))
        .isEqualTo("lo\n");
    // PID 1 is box-guard, in the pod's network with the agent; neither namespace lets them back.
    assertThat(
            KubernetesBackendTest.run(
                started,
                "nsenter --net=/proc/1/ns/net true 2>/dev/null; echo $?;"
                    + " nsenter --user=/proc/1/ns/user true 2>/dev/null; echo $?"))
        .isEqualTo("1\n1\n");
  }

  @Test
  void underTheRuntimesDefaultProfile_createFails_namingTheFix() {
    KubernetesBackend refused = backend(Map.of("k8s_seccomp_profile", "RuntimeDefault"));

    assertThatThrownBy(() -> refused.start(KubernetesBackendTest.spec("off2")))
        .isInstanceOf(BoxException.class)
        .hasMessageContaining("box-guard: --net-off")
        .hasMessageContaining("k8s_seccomp_profile=localhost/box-sandbox.json");
  }

  @Test
  void withPolicyAlone_theSessionStartsUnderTheRuntimesDefaultProfile() throws Exception {
    Sandbox started =
        backend(Map.of("k8s_seccomp_profile", "RuntimeDefault", "k8s_network_off", "policy"))
            .start(KubernetesBackendTest.spec("off3"));
    sandbox = started;

    assertThat(KubernetesBackendTest.run(started, "echo ran")).isEqualTo("ran\n");
    assertThat(started.id()).isNotBlank();
  }
}
