package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Map;

/** Sessions' pods that Box creates and deletes itself ({@code k8s_workload=pod}, the default). */
record BarePods(KubernetesClient client, String namespace) implements PodMaker {
  @Override
  public void create(Pod pod) {
    client.pods().inNamespace(namespace).resource(pod).create();
  }

  @Override
  public void remove(String name) {
    client.pods().inNamespace(namespace).withName(name).withGracePeriod(0).delete();
  }

  @Override
  public List<Warm> marked(Map<String, String> labels) {
    return client.pods().inNamespace(namespace).withLabels(labels).list().getItems().stream()
        .map(p -> Warm.of(p.getMetadata(), p))
        .toList();
  }

  @Override
  public List<String> labelMaps() {
    return List.of("/metadata/labels");
  }

  @Override
  public void patch(String name, String patch) {
    client
        .pods()
        .inNamespace(namespace)
        .withName(name)
        .patch(PatchContext.of(PatchType.JSON), patch);
  }

  @Override
  public boolean podFollows() {
    return false;
  }

  @Override
  public String describe() {
    return "pods";
  }
}
