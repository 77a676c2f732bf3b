package dev.box.backend.kubernetes;

import static dev.box.backend.kubernetes.KubernetesBackendTest.run;
import static dev.box.backend.kubernetes.KubernetesBackendTest.spec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the server reaches a pod's agent ({@code k8s_agent_path}), on the stand-in cluster, whose API
 * server runs the pods' exec subresource for real ({@link StandInExec}): through the API server,
 * every connection to the agent is an exec of {@code box-agent --pipe} in the pod, and the session
 * works as on the pod network (output, exit codes, stdin, a kill of the whole tree); with {@code
 * auto}, a pod whose IP does not answer is reached that way, and health says which way was taken;
 * with {@code direct}, it is not reached at all. Needs the Docker engine, the test image and the
 * agent image.
 */
class AgentPathTest {
  private static final String NS = "box-sandboxes";

  /** An address on this host's loopback where no agent listens: a pod network out of reach. */
  private static final String UNREACHABLE = "127.0.0.3";

  @TempDir Path root;
  private Tenant tenant;

  @BeforeEach
  void start() throws Exception {
    tenant = new Tenant(NS, root);
  }

  @AfterEach
  void stop() {
    tenant.close();
  }

  private KubernetesBackend backend(String path) {
    return tenant.replica(null, 0, Map.of("k8s_agent_path", path));
  }

  @Test
  void throughTheApiServer_aSessionRunsAsOnThePodNetwork() throws Exception {
    KubernetesBackend backend = backend("api-server");
    Sandbox sandbox = tenant.keep(backend.start(spec("s1")));

    assertThat(run(sandbox, "id -u; echo hi > f; cat f")).isEqualTo("1000\nhi\n");
    SandboxProcess failing = spawn(sandbox, "echo oops >&2; exit 7", false);
    assertThat(new String(failing.stderr().readAllBytes(), StandardCharsets.UTF_8))
        .isEqualTo("oops\n");
    assertThat(failing.waitFor(Duration.ofSeconds(30))).hasValue(7);

    SandboxProcess cat = spawn(sandbox, "tr a-z A-Z", true);
    try (OutputStream stdin = cat.stdin()) {
      stdin.write("through the api server\n".getBytes(StandardCharsets.UTF_8));
    }
    assertThat(new String(cat.stdout().readAllBytes(), StandardCharsets.UTF_8))
        .isEqualTo("THROUGH THE API SERVER\n");
    assertThat(cat.waitFor(Duration.ofSeconds(30))).hasValue(0);

    SandboxProcess tree = spawn(sandbox, "sleep 300 & sleep 300", false);
    await().atMost(Duration.ofSeconds(30)).until(() -> count(sandbox, "sleep 300") == 2);
    tree.killTree();
    assertThat(tree.waitFor(Duration.ofSeconds(30))).isPresent();
    await().atMost(Duration.ofSeconds(30)).until(() -> count(sandbox, "sleep 300") == 0);

    assertThat(backend.status().reason()).contains("through the API server");
  }

  @Test
  void auto_reachesAPodWhoseIpDoesNotAnswer_throughTheApiServer_andHealthSaysSo() throws Exception {
    KubernetesBackend first = backend("auto");
    Sandbox direct = tenant.keep(first.start(spec("s2")));
    assertThat(first.status().reason()).contains("last used: the pod network");
    String pod = direct.id();
    // The pod's IP as seen from here no longer answers: a replica outside the pod network.
    tenant
        .cluster()
        .client()
        .pods()
        .inNamespace(NS)
        .withName(pod)
        .editStatus(
            p -> {
              p.getStatus().setPodIP(UNREACHABLE);
              return p;
            });

    KubernetesBackend second = backend("auto");
    Sandbox adopted = Objects.requireNonNull(second.adopt(spec("s2")));
    tenant.keep(adopted);
    assertThat(run(adopted, "echo adopted")).isEqualTo("adopted\n");
    assertThat(second.status().reason()).contains("last used: the API server");

    assertThat(backend("direct").adopt(spec("s2")))
        .as("direct: a pod whose IP does not answer is not served")
        .isNull();
  }

  private static SandboxProcess spawn(Sandbox sandbox, String script, boolean stdin) {
    return sandbox.spawn(
        new ProcessSpec(new ProcessSpec.Shell(script), "/workspace", Map.of(), stdin));
  }

  private static int count(Sandbox sandbox, String command) throws Exception {
    String out = run(sandbox, "ps -eo args= | grep -cx '" + command + "' || true");
    return Integer.parseInt(out.strip());
  }
}
