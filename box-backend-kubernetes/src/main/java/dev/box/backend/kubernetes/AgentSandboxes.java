package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.net.HttpURLConnection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Sessions' pods made by kubernetes-sigs/agent-sandbox ({@code k8s_workload=sandbox}): for each pod
 * Box creates a Sandbox ({@value #API_VERSION}) of the same name whose {@code spec.podTemplate} is
 * that pod's labels, annotations and spec, and the project's controller makes the pod, named after
 * the Sandbox and owned by it. Operators who run that controller see Box's sessions as Sandboxes.
 *
 * <p>The Sandbox carries the pod's labels, the pool's mark ({@link Labels#POOL}) included. A take
 * of a pool pod patches the Sandbox, never the pod: the controller copies the template's labels
 * onto the pod at every reconcile, and would put back a mark removed from the pod alone; removed
 * from the template, it goes from the pod (the controller records which labels it put there).
 * Removing a pod deletes its Sandbox, then the pod with no grace period: the cluster's garbage
 * collector would delete it with the default grace period.
 */
record AgentSandboxes(KubernetesClient client, String namespace) implements PodMaker {
  /** The API group and version of agent-sandbox's Sandbox, as its v0.5 releases serve it. */
  static final String API_VERSION = "agents.x-k8s.io/v1beta1";

  /** The CRD, as an error message names it. */
  static final String CRD = "sandboxes.agents.x-k8s.io";

  /** The Sandbox kind, named in full: no discovery request is needed. */
  static final ResourceDefinitionContext SANDBOX =
      new ResourceDefinitionContext.Builder()
          .withGroup("agents.x-k8s.io")
          .withVersion("v1beta1")
          .withKind("Sandbox")
          .withPlural("sandboxes")
          .withNamespaced(true)
          .build();

  /**
   * The maker, once the cluster was found to serve Sandboxes in {@code namespace}: a namespaced
   * list, which answers 404 where the CRD is not installed.
   *
   * @throws IllegalArgumentException when the CRD is not installed, or Box may not list Sandboxes
   */
  static AgentSandboxes checked(KubernetesClient client, String namespace) {
    AgentSandboxes made = new AgentSandboxes(client, namespace);
    try {
      made.sandboxes().inNamespace(namespace).list(new ListOptionsBuilder().withLimit(1L).build());
    } catch (KubernetesClientException e) {
      // An API server that does not answer is health's to report, as with pods.
      String why =
          switch (e.getCode()) {
            case HttpURLConnection.HTTP_NOT_FOUND ->
                "the cluster does not serve agent-sandbox's Sandbox ("
                    + API_VERSION
                    + "): install its CRD "
                    + CRD
                    + " and controller, or set k8s_workload=pod";
            case HttpURLConnection.HTTP_FORBIDDEN ->
                "Box may not list "
                    + CRD
                    + " in namespace "
                    + namespace
                    + ": grant it as deploy/kubernetes/role.yaml does";
            default -> null;
          };
      if (why != null) {
        throw new IllegalArgumentException("k8s_workload=sandbox: " + why, e);
      }
    }
    return made;
  }

  private MixedOperation<
          GenericKubernetesResource,
          GenericKubernetesResourceList,
          Resource<GenericKubernetesResource>>
      sandboxes() {
    return client.genericKubernetesResources(SANDBOX);
  }

  @Override
  public void create(Pod pod) {
    sandboxes().inNamespace(namespace).resource(sandbox(pod)).create();
  }

  /** The Sandbox whose controller makes {@code pod}. */
  static GenericKubernetesResource sandbox(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    return new GenericKubernetesResourceBuilder()
        .withApiVersion(API_VERSION)
        .withKind("Sandbox")
        .withNewMetadata()
        .withName(pod.getMetadata().getName())
        .withNamespace(pod.getMetadata().getNamespace())
        .withLabels(labels)
        .withAnnotations(annotations)
        .endMetadata()
        .addToAdditionalProperties(
            "spec",
            Map.of(
                "podTemplate",
                Map.of(
                    "metadata",
                    Map.of("labels", labels, "annotations", annotations),
                    "spec",
                    pod.getSpec())))
        .build();
  }

  @Override
  public void remove(String name) {
    sandboxes().inNamespace(namespace).withName(name).delete();
    client.pods().inNamespace(namespace).withName(name).withGracePeriod(0).delete();
  }

  /** The Sandboxes that carry {@code labels}, each with its pod if the controller made it. */
  @Override
  public List<Warm> marked(Map<String, String> labels) {
    Map<String, String> podLabels = new HashMap<>(labels);
    podLabels.remove(Labels.POOL);
    Map<String, Pod> pods =
        client.pods().inNamespace(namespace).withLabels(podLabels).list().getItems().stream()
            .collect(Collectors.toMap(p -> p.getMetadata().getName(), Function.identity()));
    return sandboxes().inNamespace(namespace).withLabels(labels).list().getItems().stream()
        .map(s -> Warm.of(s.getMetadata(), pods.get(s.getMetadata().getName())))
        .toList();
  }

  @Override
  public List<String> labelMaps() {
    return List.of("/metadata/labels", "/spec/podTemplate/metadata/labels");
  }

  @Override
  public void patch(String name, String patch) {
    sandboxes().inNamespace(namespace).withName(name).patch(PatchContext.of(PatchType.JSON), patch);
  }

  @Override
  public boolean podFollows() {
    return true;
  }

  @Override
  public String describe() {
    return "agent-sandbox Sandboxes (" + API_VERSION + ") and the pods their controller makes";
  }
}
