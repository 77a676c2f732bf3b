package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stand-in for kubernetes-sigs/agent-sandbox's Sandbox controller, for tests: that controller is
 * a Go program run in a cluster, and no cluster (nor the Go toolchain) runs on this machine. It
 * watches the Sandboxes of one namespace on the API server stand-in and does what the controller
 * does with the parts Box relies on: it makes each Sandbox's pod, named after the Sandbox, with the
 * template's labels (less those of the reserved {@code agents.x-k8s.io/} prefix) and the
 * controller's {@value #NAME_HASH} label, the template's annotations and the controller's record of
 * the labels it propagated, the template's spec, and an ownerReference to the Sandbox (the
 * controller's, blocking its owner's deletion); when the Sandbox changes, it puts the template's
 * labels on the pod and takes off those it put there that the template no longer has (as a take of
 * a pool pod needs); it makes the pod again when the pod is deleted while its Sandbox lives; and,
 * since the API server stand-in has no garbage collector, it deletes a Sandbox's pod when the
 * Sandbox goes.
 *
 * <p>What it does not do, since Box reads none of it: the Sandbox's status (conditions, podIPs,
 * selector), its {@code agents.x-k8s.io/pod-name} annotation, the headless Service, the claims of
 * {@code volumeClaimTemplates}, expiry ({@code shutdownTime}), suspension, warm pools and claims.
 */
final class StandInSandboxController implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StandInSandboxController.class);

  /** The controller's label on each pod, an FNV-1a hash of the Sandbox's name. */
  static final String NAME_HASH = "agents.x-k8s.io/sandbox-name-hash";

  /** The controller's record of the template's labels it put on the pod. */
  static final String PROPAGATED_LABELS = "agents.x-k8s.io/propagated-labels";

  private final KubernetesClient client;
  private final String namespace;
  private final SharedIndexInformer<GenericKubernetesResource> sandboxes;
  private final Watch deletions;

  /**
   * Starts watching the Sandboxes of {@code namespace}, and the deletions of its pods (the
   * controller makes a Sandbox's pod again).
   */
  StandInSandboxController(KubernetesClient client, String namespace) throws InterruptedException {
    this.client = client;
    this.namespace = namespace;
    this.sandboxes =
        client
            .genericKubernetesResources(AgentSandboxes.SANDBOX)
            .inNamespace(namespace)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(GenericKubernetesResource sandbox) {
                    reconcile(sandbox.getMetadata().getName());
                  }

                  @Override
                  public void onUpdate(
                      GenericKubernetesResource before, GenericKubernetesResource after) {
                    relabel(after);
                  }

                  @Override
                  public void onDelete(GenericKubernetesResource sandbox, boolean unknown) {
                    collect(sandbox);
                  }
                });
    this.deletions =
        client
            .pods()
            .inNamespace(namespace)
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, Pod pod) {
                    String owner = owner(pod);
                    if (action == Action.DELETED && owner != null) {
                      reconcile(owner);
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    log.warn("the watch of the pods ended: {}", cause.getMessage());
                  }
                });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!sandboxes.hasSynced() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
  }

  /** The Sandbox that controls {@code pod}, or null. */
  private static @Nullable String owner(Pod pod) {
    return pod.getMetadata().getOwnerReferences().stream()
        .filter(o -> "Sandbox".equals(o.getKind()) && Boolean.TRUE.equals(o.getController()))
        .map(OwnerReference::getName)
        .findFirst()
        .orElse(null);
  }

  /**
   * Makes the pod of Sandbox {@code name} unless it exists, as the API server has the Sandbox now
   * (not a watch's older copy); a Sandbox deleted meanwhile takes its new pod with it.
   */
  private void reconcile(String name) {
    try {
      GenericKubernetesResource sandbox = sandbox(name);
      if (sandbox == null || sandbox.getMetadata().getDeletionTimestamp() != null) {
        return;
      }
      try {
        client.pods().inNamespace(namespace).resource(pod(sandbox)).create();
      } catch (KubernetesClientException e) {
        if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
          throw e;
        }
        return;
      }
      GenericKubernetesResource now = sandbox(name);
      if (now == null || !now.getMetadata().getUid().equals(sandbox.getMetadata().getUid())) {
        collect(sandbox);
      }
    } catch (KubernetesClientException e) {
      log.warn("cannot make the pod of Sandbox {}: {}", name, e.getMessage());
    }
  }

  /** The Sandbox {@code name} as the API server has it now, or null. */
  @Nullable GenericKubernetesResource sandbox(String name) {
    return client
        .genericKubernetesResources(AgentSandboxes.SANDBOX)
        .inNamespace(namespace)
        .withName(name)
        .get();
  }

  /** Deletes the pods {@code sandbox} owns, as the garbage collector would. */
  private void collect(GenericKubernetesResource sandbox) {
    Pod pod = client.pods().inNamespace(namespace).withName(sandbox.getMetadata().getName()).get();
    if (pod != null
        && pod.getMetadata().getOwnerReferences().stream()
            .anyMatch(o -> o.getUid().equals(sandbox.getMetadata().getUid()))) {
      client.pods().inNamespace(namespace).resource(pod).withGracePeriod(0).delete();
    }
  }

  /**
   * Puts the template's labels of {@code sandbox} on its pod, and takes off those it put there
   * before that the template no longer has, as the controller does at every reconcile.
   */
  private void relabel(GenericKubernetesResource sandbox) {
    String name = sandbox.getMetadata().getName();
    try {
      Pod pod = client.pods().inNamespace(namespace).withName(name).get();
      if (pod == null
          || pod.getMetadata().getOwnerReferences().stream()
              .noneMatch(o -> o.getUid().equals(sandbox.getMetadata().getUid()))) {
        return;
      }
      Map<String, String> template = templateLabels(sandbox);
      Map<String, String> labels = new HashMap<>(pod.getMetadata().getLabels());
      String before = pod.getMetadata().getAnnotations().getOrDefault(PROPAGATED_LABELS, "");
      for (String key : before.split(",")) {
        if (!template.containsKey(key)) {
          labels.remove(key);
        }
      }
      labels.putAll(template);
      if (!labels.equals(pod.getMetadata().getLabels())) {
        client
            .pods()
            .inNamespace(namespace)
            .withName(name)
            .edit(
                p ->
                    new PodBuilder(p)
                        .editMetadata()
                        .withLabels(labels)
                        .addToAnnotations(PROPAGATED_LABELS, propagated(template))
                        .endMetadata()
                        .build());
      }
    } catch (KubernetesClientException e) {
      log.warn("cannot relabel the pod of Sandbox {}: {}", name, e.getMessage());
    }
  }

  /** The labels of the pod template of {@code sandbox}, less the reserved ones. */
  private static Map<String, String> templateLabels(GenericKubernetesResource sandbox) {
    Map<String, String> labels = new HashMap<>();
    strings(map(template(sandbox).get("metadata")).get("labels"))
        .forEach(
            (k, v) -> {
              if (!k.startsWith("agents.x-k8s.io/")
                  && !k.startsWith("extensions.agents.x-k8s.io/")) {
                labels.put(k, v);
              }
            });
    return labels;
  }

  /** The pod template of {@code sandbox}. */
  private static Map<String, Object> template(GenericKubernetesResource sandbox) {
    return map(map(sandbox.getAdditionalProperties().get("spec")).get("podTemplate"));
  }

  /** The controller's record of the labels it put on a pod. */
  private static String propagated(Map<String, String> labels) {
    return String.join(",", new TreeSet<>(labels.keySet()));
  }

  /** The pod of {@code sandbox}, from its template, as the controller makes it. */
  private Pod pod(GenericKubernetesResource sandbox) {
    Map<String, String> labels = templateLabels(sandbox);
    Map<String, String> annotations =
        new HashMap<>(strings(map(template(sandbox).get("metadata")).get("annotations")));
    annotations.put(PROPAGATED_LABELS, propagated(labels));
    String name = sandbox.getMetadata().getName();
    labels.put(NAME_HASH, nameHash(name));
    PodSpec spec =
        client
            .getKubernetesSerialization()
            .convertValue(template(sandbox).get("spec"), PodSpec.class);
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .withLabels(labels)
        .withAnnotations(annotations)
        .withOwnerReferences(
            new OwnerReferenceBuilder()
                .withApiVersion(sandbox.getApiVersion())
                .withKind(sandbox.getKind())
                .withName(name)
                .withUid(sandbox.getMetadata().getUid())
                .withController(true)
                .withBlockOwnerDeletion(true)
                .build())
        .endMetadata()
        .withSpec(spec)
        .build();
  }

  /** The controller's name hash: FNV-1a of the name, 8 hexadecimal digits. */
  static String nameHash(String name) {
    int hash = 0x811c9dc5;
    for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
      hash ^= b & 0xff;
      hash *= 0x01000193;
    }
    return String.format("%08x", hash);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(@Nullable Object value) {
    return value == null ? Map.of() : (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> strings(@Nullable Object value) {
    return value == null ? Map.of() : (Map<String, String>) value;
  }

  @Override
  public void close() {
    sandboxes.close();
    deletions.close();
  }
}
