package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.Cidr;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pod and policy a session gets, as the API server stores them: fabric8's KubernetesMockServer
 * in CRUD mode stands in for the API server (no cluster runs here); it stores and returns what it
 * is sent, as a real one does after defaulting.
 */
class PodShapeTest {
  private static final NetworkPolicies POLICIES =
      new NetworkPolicies("sandboxes", "box", List.of(Cidr.parse("10.0.0.0/8")));

  private final ApiServer server = new ApiServer();
  private final KubernetesClient client = server.client();

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  private static PodShape shape(boolean readOnly, @Nullable String claim) {
    return new PodShape(
        "box-s1-0123456789abcdef",
        Map.of(Labels.MANAGED_BY, Labels.BOX, Labels.POD, "box-s1-0123456789abcdef"),
        Map.of(Labels.SESSION_ID, "s1"),
        "python:3.12-slim",
        readOnly,
        1.5,
        512,
        2048,
        claim,
        BoxNetworkMode.OFF);
  }

  @Test
  void theSessionsContainerRunsTheAgentUnderTheGuard_asAnUnprivilegedUser() {
    KubernetesSettings settings =
        KubernetesSettings.read(
            Map.of(
                "k8s_namespace", "sandboxes",
                "k8s_runtime_class", "gvisor",
                "k8s_node_selector", "pool=sandboxes",
                "k8s_tolerations", "dedicated=box:NoSchedule, gpu:NoExecute"));
    client.pods().inNamespace("sandboxes").resource(shape(true, null).pod(settings)).create();

    Pod pod = client.pods().inNamespace("sandboxes").withName("box-s1-0123456789abcdef").get();
    var spec = pod.getSpec();
    assertThat(spec.getAutomountServiceAccountToken()).isFalse();
    assertThat(spec.getEnableServiceLinks()).isFalse();
    assertThat(spec.getHostNetwork()).isFalse();
    assertThat(spec.getHostPID()).isFalse();
    assertThat(spec.getHostIPC()).isFalse();
    assertThat(spec.getRuntimeClassName()).isEqualTo("gvisor");
    assertThat(spec.getNodeSelector()).containsExactly(Map.entry("pool", "sandboxes"));
    assertThat(spec.getTolerations())
        .extracting(t -> t.getKey() + "|" + t.getOperator() + "|" + t.getEffect())
        .containsExactly("dedicated|Equal|NoSchedule", "gpu|Exists|NoExecute");
    assertThat(spec.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(spec.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

    Container sandbox = spec.getContainers().getFirst();
    assertThat(sandbox.getCommand())
        .containsExactly(
            "/box/bin/box-guard",
            "--init",
            "--net-off",
            "--",
            "/box/bin/box-agent",
            "--listen",
            "5411",
            "/box/secret/agent-token",
            "--netns",
            "3",
            "4");
    assertThat(sandbox.getReadinessProbe().getTcpSocket().getPort().getIntVal()).isEqualTo(5411);
    var security = sandbox.getSecurityContext();
    assertThat(security.getRunAsUser()).isEqualTo(1000L);
    assertThat(security.getAllowPrivilegeEscalation()).isFalse();
    assertThat(security.getPrivileged()).isFalse();
    assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(security.getReadOnlyRootFilesystem()).isTrue();
    assertThat(sandbox.getResources().getLimits())
        .containsEntry("cpu", new Quantity("1500m"))
        .containsEntry("memory", new Quantity("512Mi"));
    assertThat(sandbox.getResources().getRequests()).isEqualTo(sandbox.getResources().getLimits());
    assertThat(sandbox.getEnv()).noneMatch(e -> e.getName().contains("TOKEN"));
    assertThat(spec.getVolumes())
        .filteredOn(v -> v.getName().equals("workspace"))
        .singleElement()
        .satisfies(
            v -> assertThat(v.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("2048Mi")));
    assertThat(spec.getVolumes())
        .filteredOn(v -> v.getName().equals("box-secret"))
        .singleElement()
        .satisfies(
            v -> assertThat(v.getSecret().getSecretName()).isEqualTo(pod.getMetadata().getName()));
  }

  @Test
  void aNetworkOffSession_withPolicyAlone_getsNoNamespaceOfItsOwn() {
    KubernetesSettings settings = KubernetesSettings.read(Map.of("k8s_network_off", "policy"));

    List<String> command =
        shape(false, null).pod(settings).getSpec().getContainers().getFirst().getCommand();

    assertThat(command).doesNotContain("--net-off", "--netns");
    assertThat(command).startsWith("/box/bin/box-guard", "--init", "--");
  }

  @Test
  void networkOff_acceptsNamespaceOrPolicy_only() {
    assertThat(KubernetesSettings.defaults().networkOff())
        .isEqualTo(KubernetesSettings.NetworkOff.NAMESPACE);
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_network_off", "none")))
        .hasMessageContaining("k8s_network_off: namespace or policy");
  }

  @Test
  void agentPath_acceptsAutoDirectOrApiServer_only() {
    assertThat(KubernetesSettings.defaults().agentPath())
        .isEqualTo(KubernetesSettings.AgentPath.AUTO);
    assertThat(KubernetesSettings.read(Map.of("k8s_agent_path", "api-server")).agentPath())
        .isEqualTo(KubernetesSettings.AgentPath.API_SERVER);
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_agent_path", "api_server")))
        .hasMessageContaining("k8s_agent_path: auto, direct or api-server");
  }

  @Test
  void aPersistentSessionsWorkspaceIsItsClaim_andALocalhostProfileIsNamed() {
    KubernetesSettings settings =
        KubernetesSettings.read(Map.of("k8s_seccomp_profile", "localhost/box/guard.json"));
    Pod pod = shape(false, "box-s1-workspace").pod(settings);
    assertThat(pod.getSpec().getVolumes())
        .filteredOn(v -> v.getName().equals("workspace"))
        .singleElement()
        .satisfies(
            v ->
                assertThat(v.getPersistentVolumeClaim().getClaimName())
                    .isEqualTo("box-s1-workspace"));
    assertThat(pod.getSpec().getSecurityContext().getSeccompProfile().getLocalhostProfile())
        .isEqualTo("box/guard.json");
    assertThat(
            pod.getSpec()
                .getContainers()
                .getFirst()
                .getSecurityContext()
                .getReadOnlyRootFilesystem())
        .isFalse();
  }

  @Test
  void settingsThatTheClusterWouldRefuseAreRefusedAtStart() {
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_namespace", "Box_Sandboxes")))
        .hasMessageContaining("k8s_namespace");
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_image_pull_policy", "Sometimes")))
        .hasMessageContaining("k8s_image_pull_policy");
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_tolerations", "gpu")))
        .hasMessageContaining("key[=value]:Effect");
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_seccomp_profile", "Unconfined")))
        .hasMessageContaining("RuntimeDefault or localhost/");
    assertThatThrownBy(() -> KubernetesSettings.read(Map.of("k8s_node_selector", "a")))
        .hasMessageContaining("key=value");
  }

  @Test
  void networkOffAllowsNoEgress_andOnlyBoxsPodsReachTheAgent() {
    NetworkPolicy policy = POLICIES.forPod("box-s1", BoxNetworkMode.OFF, BoxEgress.NONE);
    client.network().networkPolicies().inNamespace("sandboxes").resource(policy).create();
    NetworkPolicy stored =
        client.network().networkPolicies().inNamespace("sandboxes").withName("box-s1").get();
    assertThat(stored.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
    assertThat(stored.getSpec().getEgress()).isEmpty();
    var from = stored.getSpec().getIngress().getFirst();
    assertThat(from.getPorts())
        .singleElement()
        .satisfies(p -> assertThat(p.getPort().getIntVal()).isEqualTo(5411));
    assertThat(from.getFrom().getFirst().getPodSelector().getMatchLabels())
        .containsEntry("app.kubernetes.io/name", "box");
  }

  @Test
  void networkOnExceptsTheClusterAndMetadata_andAllowOutCannotReopenThem() {
    BoxEgress egress =
        new BoxEgress(
            List.of(Cidr.parse("10.1.0.0/16"), Cidr.parse("203.0.113.7/32")),
            List.of(Cidr.parse("198.51.100.0/24")));
    NetworkPolicy policy = POLICIES.forPod("box-s1", BoxNetworkMode.ON, egress);
    var dns = policy.getSpec().getEgress().getFirst();
    assertThat(dns.getTo().getFirst().getPodSelector().getMatchLabels())
        .containsEntry("k8s-app", "kube-dns");
    assertThat(dns.getPorts()).extracting(p -> p.getPort().getIntVal()).containsExactly(53, 53);
    var blocks =
        policy.getSpec().getEgress().stream()
            .skip(1)
            .map(r -> r.getTo().getFirst().getIpBlock())
            .toList();
    assertThat(blocks.getFirst().getCidr()).isEqualTo("0.0.0.0/0");
    assertThat(blocks.getFirst().getExcept())
        .containsExactly("10.0.0.0/8", "169.254.0.0/16", "198.51.100.0/24");
    assertThat(blocks)
        .extracting(b -> b.getCidr())
        .containsExactly("0.0.0.0/0", Cidr.parse("::/0").toString(), "203.0.113.7/32");
  }

  @Test
  void podNamesAreTheSameOnEveryReplica_andValidDnsLabels() {
    String tenant = Labels.tenant("sandboxes", "token-a");
    assertThat(Labels.podName(tenant, "My Session/1"))
        .isEqualTo(Labels.podName(tenant, "My Session/1"));
    assertThat(Labels.podName(tenant, "My Session/1")).matches("box-my-session-1-[0-9a-f]{16}");
    assertThat(Labels.podName(Labels.tenant("sandboxes", "token-b"), "My Session/1"))
        .isNotEqualTo(Labels.podName(tenant, "My Session/1"));
    assertThat(Labels.podName(tenant, "x".repeat(200))).hasSizeLessThanOrEqualTo(63);
    assertThat(tenant).doesNotContain("token");
  }
}
