package dev.box.backend.kubernetes;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What makes and removes the sessions' pods, as {@code k8s_workload} says: Box itself ({@link
 * BarePods}), or agent-sandbox's controller from a Sandbox Box creates ({@link AgentSandboxes}).
 * Either way the pod is the one {@link PodShape} describes, of the same name, and Box waits for it
 * and dials its agent alike.
 */
sealed interface PodMaker permits BarePods, AgentSandboxes {
  /**
   * The maker {@code settings} name on {@code client}.
   *
   * @throws IllegalArgumentException when the setting needs a kind the cluster does not serve
   */
  static PodMaker of(KubernetesClient client, KubernetesSettings settings) {
    return switch (settings.workload()) {
      case POD -> new BarePods(client, settings.namespace());
      case SANDBOX -> AgentSandboxes.checked(client, settings.namespace());
    };
  }

  /**
   * An object of the pool's: the pod or Sandbox {@code name}, its annotations (which a take
   * replaces) and its pod, or null while no pod was made yet.
   */
  record Warm(String name, Map<String, String> annotations, @Nullable Pod pod) {
    /** The object of {@code metadata}, with {@code pod}. */
    static Warm of(ObjectMeta metadata, @Nullable Pod pod) {
      Map<String, String> annotations = metadata.getAnnotations();
      return new Warm(metadata.getName(), annotations == null ? Map.of() : annotations, pod);
    }
  }

  /**
   * Has {@code pod} made.
   *
   * @throws io.fabric8.kubernetes.client.KubernetesClientException with 409 when it exists
   */
  void create(Pod pod);

  /** Removes the pod {@code name} (and what made it) at once, with no grace period. */
  void remove(String name);

  /** The objects that carry {@code labels}: those a take {@linkplain #patch patches}. */
  List<Warm> marked(Map<String, String> labels);

  /**
   * The JSON pointers of the label maps a take changes on an object of {@link #marked}: the first
   * is the one {@link #marked} finds it by.
   */
  List<String> labelMaps();

  /** Applies the JSON patch {@code patch} to the object {@code name} of {@link #marked}. */
  void patch(String name, String patch);

  /** Whether a pod that does not exist (yet, or again) is made by a controller. */
  boolean podFollows();

  /** What a session is, for health: the kind of object Box creates. */
  String describe();
}
