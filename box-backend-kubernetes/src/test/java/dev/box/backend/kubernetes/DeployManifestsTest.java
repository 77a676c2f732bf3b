package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The manifests of {@code deploy/kubernetes} as {@code kubectl kustomize} renders them: offline (an
 * empty kubeconfig; no cluster runs here), parsed with fabric8's serialization, and checked against
 * what the backend's code expects of them: the sandbox namespace, the label the sandbox pods'
 * NetworkPolicies admit, and the least privilege Box needs.
 *
 * <p>Without kubectl (Debian's {@code kubernetes-client}, which {@code scripts/common.sh} installs)
 * the tests are skipped with the reason; where the variable {@code CI} is set they fail instead.
 */
class DeployManifestsTest {
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  private static final Path REPO =
      Objects.requireNonNull(Path.of("").toAbsolutePath().getParent(), "the module's parent");
  private static final Path DEPLOY = REPO.resolve("deploy/kubernetes");
  private static final String BOX_NAMESPACE = "box";
  private static final String TOKEN_SECRET = "box-control-token";
  private static final List<String> READ_WRITE =
      List.of("create", "get", "list", "delete", "patch");

  /** What the Role grants, by {@code apiGroup/resource}: exactly this, nothing more. */
  private static final Map<String, Set<String>> GRANTS =
      Map.of(
          "/pods", Set.of("create", "get", "list", "watch", "delete", "patch"),
          "/pods/exec", Set.of("create", "get"),
          "/secrets", Set.copyOf(READ_WRITE),
          "/persistentvolumeclaims", Set.copyOf(READ_WRITE),
          "networking.k8s.io/networkpolicies", Set.copyOf(READ_WRITE),
          "coordination.k8s.io/leases", Set.of("create", "get", "list", "patch", "delete"),
          "agents.x-k8s.io/sandboxes", Set.of("create", "list", "patch", "delete"));

  private static List<HasMetadata> objects = List.of();

  @BeforeAll
  static void render() throws IOException, InterruptedException {
    Path kubectl = kubectl();
    if (kubectl == null) {
      String reason =
          "no kubectl on PATH or in /usr/bin (Debian's kubernetes-client; scripts/common.sh"
              + " installs it as root)";
      if (System.getenv("CI") != null) {
        Assertions.fail("kubectl is missing and CI is set: " + reason);
      }
      Assumptions.abort("kubectl missing: " + reason);
    }
    objects = parse(kustomize(Objects.requireNonNull(kubectl)));
  }

  @Test
  void theRole_grantsExactlyWhatBoxUses_inTheSandboxNamespaceOnly() {
    assertThat(objects)
        .extracting(HasMetadata::getKind)
        .doesNotContain("ClusterRole", "ClusterRoleBinding");
    Role role = one(Role.class, "box");
    assertThat(role.getMetadata().getNamespace()).isEqualTo(KubernetesSettings.DEFAULT_NAMESPACE);
    Map<String, Set<String>> granted = new TreeMap<>();
    for (PolicyRule rule : role.getRules()) {
      assertThat(rule.getNonResourceURLs()).as("non-resource URLs are cluster-wide").isEmpty();
      assertThat(rule.getResourceNames()).isEmpty();
      assertThat(Stream.of(rule.getApiGroups(), rule.getResources(), rule.getVerbs()))
          .as("no wildcard in %s", rule)
          .allSatisfy(words -> assertThat(words).isNotEmpty().noneMatch(w -> w.contains("*")));
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          granted
              .computeIfAbsent(group + "/" + resource, k -> new TreeSet<>())
              .addAll(rule.getVerbs());
        }
      }
    }
    assertThat(granted).isEqualTo(GRANTS);

    RoleBinding binding = one(RoleBinding.class, "box");
    assertThat(binding.getMetadata().getNamespace())
        .isEqualTo(KubernetesSettings.DEFAULT_NAMESPACE);
    assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
    assertThat(binding.getRoleRef().getName()).isEqualTo("box");
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getKind()).isEqualTo("ServiceAccount");
              assertThat(s.getNamespace()).isEqualTo(BOX_NAMESPACE);
              assertThat(one(ServiceAccount.class, s.getName()).getMetadata().getNamespace())
                  .isEqualTo(BOX_NAMESPACE);
            });
  }

  @Test
  void boxsPod_runsUnprivileged_withAReadOnlyRoot_andItsStateOnAnEmptyDir() {
    Deployment deployment = one(Deployment.class, "box");
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    assertThat(pod.getServiceAccountName()).isEqualTo("box");
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    Container box = box(pod);
    assertThat(box.getArgs()).containsExactly("serve", "--backend", "kubernetes");
    assertThat(box.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(box.getSecurityContext().getPrivileged()).isFalse();
    assertThat(box.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(box.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(box.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(box.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(box.getResources().getLimits()).containsKey("memory");

    String dataDir = env(box, "BOX_DATA_DIR").getValue();
    assertThat(List.of(dataDir, "/tmp"))
        .as("the writable directories of a read-only root")
        .allSatisfy(dir -> assertThat(volumeAt(pod, box, dir).getEmptyDir()).isNotNull());
  }

  @Test
  void boxsPod_isProbedAndScraped_onItsPort() {
    Deployment deployment = one(Deployment.class, "box");
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    Container box = box(pod);
    HTTPGetAction ready = box.getReadinessProbe().getHttpGet();
    HTTPGetAction live = box.getLivenessProbe().getHttpGet();
    assertThat(ready.getPath()).isEqualTo("/readyz");
    assertThat(live.getPath()).isEqualTo("/healthz");
    assertThat(List.of(ready, live)).allSatisfy(get -> assertThat(port(box, get)).isEqualTo(5410));

    assertThat(deployment.getSpec().getTemplate().getMetadata().getAnnotations())
        .containsEntry("prometheus.io/scrape", "true")
        .containsEntry("prometheus.io/port", "5410")
        .containsEntry("prometheus.io/path", "/metrics");
    assertThat(env(box, "BOX_METRICS_OPEN").getValue())
        .as("a scraper found by annotations holds no token")
        .isEqualTo("true");
    assertThat(env(box, "BOX_REPLICA_URL").getValue())
        .as("where the other replicas reach this one's managed processes")
        .isEqualTo("http://$(POD_IP):5410");
    assertThat(env(box, "POD_IP").getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("status.podIP");
    assertThat(box.getEnv().stream().map(EnvVar::getName).toList())
        .as("a variable is expanded from those declared before it")
        .containsSubsequence("POD_IP", "BOX_REPLICA_URL");

    Service service = one(Service.class, "box");
    assertThat(service.getSpec().getType()).isEqualTo("ClusterIP");
    assertThat(service.getSpec().getPorts())
        .singleElement()
        .satisfies(p -> assertThat(p.getPort()).isEqualTo(5410));
    assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(service.getSpec().getSelector());
  }

  @Test
  void theSandboxNamespace_admitsOnlyRestrictedPods_whosePoliciesAdmitBoxsPods() {
    assertThat(one(Namespace.class, KubernetesSettings.DEFAULT_NAMESPACE).getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "restricted");
    Deployment deployment = one(Deployment.class, "box");
    assertThat(deployment.getMetadata().getNamespace()).isEqualTo(BOX_NAMESPACE);
    NetworkPolicyPeer admitted =
        new NetworkPolicies(KubernetesSettings.DEFAULT_NAMESPACE, BOX_NAMESPACE, List.of())
            .forPod("box-s1", BoxNetworkMode.OFF, BoxEgress.NONE)
            .getSpec()
            .getIngress()
            .getFirst()
            .getFrom()
            .getFirst();
    assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(admitted.getPodSelector().getMatchLabels());
    assertThat(one(Namespace.class, BOX_NAMESPACE).getMetadata().getLabels())
        .containsAllEntriesOf(admitted.getNamespaceSelector().getMatchLabels());
  }

  @Test
  void theControlToken_comesFromTheSecret_whichIsNeverApplied() throws IOException {
    Container box = box(one(Deployment.class, "box").getSpec().getTemplate().getSpec());
    EnvVar token = env(box, "BOX_CONTROL_TOKEN");
    assertThat(token.getValue()).as("a literal token").isNull();
    assertThat(token.getValueFrom().getSecretKeyRef().getName()).isEqualTo(TOKEN_SECRET);
    assertThat(token.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("token");
    assertThat(objects).noneMatch(Secret.class::isInstance);

    Secret example =
        SERIALIZATION.unmarshal(
            Files.readString(DEPLOY.resolve("control-token-secret.example.yaml")), Secret.class);
    assertThat(example.getMetadata().getName()).isEqualTo(TOKEN_SECRET);
    assertThat(example.getMetadata().getNamespace()).isEqualTo(BOX_NAMESPACE);
    assertThat(example.getStringData()).containsOnlyKeys("token");
  }

  private static <T extends HasMetadata> T one(Class<T> type, String name) {
    List<T> found =
        objects.stream()
            .filter(type::isInstance)
            .map(type::cast)
            .filter(o -> o.getMetadata().getName().equals(name))
            .toList();
    assertThat(found).as("%s %s", type.getSimpleName(), name).hasSize(1);
    return found.getFirst();
  }

  private static Container box(PodSpec pod) {
    assertThat(pod.getContainers()).extracting(Container::getName).containsExactly("box");
    return pod.getContainers().getFirst();
  }

  private static EnvVar env(Container container, String name) {
    return container.getEnv().stream()
        .filter(e -> e.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " in " + container.getEnv()));
  }

  private static Volume volumeAt(PodSpec pod, Container container, String path) {
    String name =
        container.getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals(path))
            .map(VolumeMount::getName)
            .findFirst()
            .orElseThrow(() -> new AssertionError("nothing mounted at " + path));
    return pod.getVolumes().stream()
        .filter(v -> v.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + name));
  }

  /** The port a probe targets, its name resolved against the container's ports. */
  private static int port(Container container, HTTPGetAction get) {
    if (get.getPort().getIntVal() != null) {
      return get.getPort().getIntVal();
    }
    return container.getPorts().stream()
        .filter(p -> get.getPort().getStrVal().equals(p.getName()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no port named " + get.getPort().getStrVal()))
        .getContainerPort();
  }

  private static @Nullable Path kubectl() {
    String path = System.getenv().getOrDefault("PATH", "");
    return Stream.concat(Arrays.stream(path.split(File.pathSeparator)), Stream.of("/usr/bin"))
        .filter(dir -> !dir.isEmpty())
        .map(dir -> Path.of(dir, "kubectl"))
        .filter(Files::isExecutable)
        .findFirst()
        .orElse(null);
  }

  /** Renders the kustomization with an empty kubeconfig, so that no cluster is ever asked. */
  private static String kustomize(Path kubectl) throws IOException, InterruptedException {
    Path kubeconfig = Files.createTempFile("box-kubeconfig-", ".yaml");
    Path stderr = Files.createTempFile("box-kustomize-", ".err");
    try {
      ProcessBuilder builder =
          new ProcessBuilder(kubectl.toString(), "kustomize", DEPLOY.toString())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .redirectError(stderr.toFile());
      builder.environment().put("KUBECONFIG", kubeconfig.toString());
      Process process = builder.start();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(2, TimeUnit.MINUTES)) {
        process.destroyForcibly();
        throw new AssertionError("kubectl kustomize did not end within 2 minutes");
      }
      assertThat(process.exitValue())
          .as("kubectl kustomize %s: %s", DEPLOY, Files.readString(stderr))
          .isZero();
      return out;
    } finally {
      Files.deleteIfExists(kubeconfig);
      Files.deleteIfExists(stderr);
    }
  }

  private static List<HasMetadata> parse(String yaml) {
    Object parsed = SERIALIZATION.unmarshal(yaml);
    assertThat(parsed).as("several objects").isInstanceOf(List.class);
    return ((List<?>) parsed).stream().map(HasMetadata.class::cast).toList();
  }
}
