package dev.box.backend.kubernetes;

import dev.box.api.Cidr;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Where and how the backend runs its pods.
 *
 * @param namespace the namespace of the sandbox pods (and their secrets and claims)
 * @param runtimeClass the pods' RuntimeClass (gVisor, Kata, ...), or null for the cluster's default
 * @param imagePullPolicy {@code Always}, {@code IfNotPresent} or {@code Never}
 * @param nodeSelector labels a node must carry to run a sandbox pod
 * @param tolerations taints the pods tolerate, each {@code key[=value]:Effect}
 * @param storageClass the StorageClass of persistent sessions' workspace claims, or null for the
 *     cluster's default
 * @param agentImage the image whose init container brings {@code box-guard} and {@code box-agent}
 *     into every pod (see docs/KUBERNETES.md for how to publish it to a registry)
 * @param seccompProfile {@code RuntimeDefault}, or {@code localhost/<profile>} for a profile the
 *     operator installed on the nodes
 * @param kubeconfig the kubeconfig file to reach the cluster with, or null for the standard places:
 *     the pod's service account in a cluster, else {@code KUBECONFIG}, else {@code ~/.kube/config}
 * @param boxNamespace the namespace of Box's own pods, the only ones that reach the agents
 * @param clusterRanges the address blocks of the cluster (pods, services, the API server), which
 *     network-on sessions may not reach
 * @param networkOff what keeps a network-off session off the network besides its NetworkPolicy
 * @param agentPath how the server reaches the pods' agents
 * @param workload what Box creates for a session's pod: the pod itself, or an agent-sandbox Sandbox
 *     whose controller makes it
 */
public record KubernetesSettings(
    String namespace,
    @Nullable String runtimeClass,
    String imagePullPolicy,
    Map<String, String> nodeSelector,
    List<Toleration> tolerations,
    @Nullable String storageClass,
    String agentImage,
    String seccompProfile,
    @Nullable String kubeconfig,
    String boxNamespace,
    List<Cidr> clusterRanges,
    NetworkOff networkOff,
    AgentPath agentPath,
    Workload workload) {
  /** A configuration key of the backend, as a flag, variable or file entry spells it. */
  enum Key {
    NAMESPACE,
    RUNTIME_CLASS,
    IMAGE_PULL_POLICY,
    NODE_SELECTOR,
    TOLERATIONS,
    STORAGE_CLASS,
    AGENT_IMAGE,
    SECCOMP_PROFILE,
    KUBECONFIG,
    BOX_NAMESPACE,
    CLUSTER_RANGES,
    NETWORK_OFF,
    AGENT_PATH,
    WORKLOAD;

    /** The key's text: {@code k8s_} and its name in lower case. */
    String text() {
      return "k8s_" + name().toLowerCase(Locale.ROOT);
    }

    @Nullable String in(Map<String, String> values) {
      return values.get(text());
    }

    /**
     * This key's value among the constants of {@code fallback}'s enum, each spelled as its name in
     * lower case with hyphens; {@code fallback} when it is unset.
     */
    <E extends Enum<E>> E choice(Map<String, String> values, E fallback) {
      String text = orDefault(in(values), spelled(fallback));
      EnumSet<E> choices = EnumSet.allOf(fallback.getDeclaringClass());
      for (E choice : choices) {
        if (spelled(choice).equals(text)) {
          return choice;
        }
      }
      List<String> spelled = choices.stream().map(Key::spelled).toList();
      throw new IllegalArgumentException(
          this
              + ": "
              + String.join(", ", spelled.subList(0, spelled.size() - 1))
              + " or "
              + spelled.getLast()
              + ", not '"
              + text
              + "'");
    }

    private static String spelled(Enum<?> choice) {
      return choice.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    @Override
    public String toString() {
      return text();
    }
  }

  /** The keys {@link #read} reads. */
  public static final List<String> KEYS = Stream.of(Key.values()).map(Key::text).toList();

  /** The namespace when none is configured. */
  public static final String DEFAULT_NAMESPACE = "box-sandboxes";

  /** The namespace of Box's pods when none is configured, as deploy/kubernetes has it. */
  public static final String DEFAULT_BOX_NAMESPACE = "box";

  /** The cluster's ranges when none are configured: every private range. */
  public static final String DEFAULT_CLUSTER_RANGES =
      "10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7";

  /** The agent image when none is configured, as {@code scripts/agent-image} builds it. */
  public static final String DEFAULT_AGENT_IMAGE = "box-agent:latest";

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
  private static final Pattern LABEL_KEY =
      Pattern.compile(
          "([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");
  private static final Pattern LOCALHOST_PROFILE =
      Pattern.compile("localhost/[A-Za-z0-9._/-]{1,200}");

  /** What keeps a network-off session's processes off the network ({@code k8s_network_off}). */
  public enum NetworkOff {
    /**
     * A network namespace of the session's own in the pod, with only loopback ({@code box-guard
     * --net-off}), and the NetworkPolicy; a pod that cannot make the namespace does not start.
     */
    NAMESPACE,
    /** The NetworkPolicy alone, which only a network plugin that implements it enforces. */
    POLICY
  }

  /** How the server reaches a pod's agent ({@code k8s_agent_path}). */
  public enum AgentPath {
    /** On the pod network when the agent's port answers there, else through the API server. */
    AUTO,
    /** On the pod network only: a pod whose agent's port does not answer there fails to start. */
    DIRECT,
    /**
     * Through the API server only: each connection to the agent is an exec of {@code box-agent
     * --pipe} in the pod, for a server outside the cluster's pod network.
     */
    API_SERVER
  }

  /** What Box creates for a session's pod ({@code k8s_workload}). */
  public enum Workload {
    /** The pod itself. */
    POD,
    /**
     * An agent-sandbox Sandbox ({@code agents.x-k8s.io}) whose pod template is the pod, made by
     * that project's controller, so that the operators who run it see Box's sandboxes there.
     */
    SANDBOX
  }

  /** A taint a sandbox pod tolerates: {@code key[=value]:Effect}. */
  public record Toleration(String key, @Nullable String value, String effect) {
    private static final List<String> EFFECTS =
        List.of("NoSchedule", "PreferNoSchedule", "NoExecute");

    /** Checks the parts. */
    public Toleration {
      if (!LABEL_KEY.matcher(key).matches()) {
        throw new IllegalArgumentException(Key.TOLERATIONS + ": '" + key + "' is not a taint key");
      }
      if (value != null && !LABEL_VALUE.matcher(value).matches()) {
        throw new IllegalArgumentException(
            Key.TOLERATIONS + ": '" + value + "' is not a taint value");
      }
      if (!EFFECTS.contains(effect)) {
        throw new IllegalArgumentException(
            Key.TOLERATIONS + ": the effect must be one of " + EFFECTS + ", not '" + effect + "'");
      }
    }

    static Toleration parse(String text) {
      int colon = text.lastIndexOf(':');
      if (colon < 0) {
        throw new IllegalArgumentException(
            Key.TOLERATIONS + ": '" + text + "' is not key[=value]:Effect");
      }
      String keyValue = text.substring(0, colon);
      int eq = keyValue.indexOf('=');
      return new Toleration(
          eq < 0 ? keyValue : keyValue.substring(0, eq),
          eq < 0 ? null : keyValue.substring(eq + 1),
          text.substring(colon + 1));
    }
  }

  /** Checks every value, so that a mistake is reported at start, not at the first session. */
  public KubernetesSettings {
    if (!DNS_LABEL.matcher(namespace).matches()) {
      throw new IllegalArgumentException(
          Key.NAMESPACE + ": '" + namespace + "' is not a namespace name");
    }
    if (runtimeClass != null && !DNS_SUBDOMAIN.matcher(runtimeClass).matches()) {
      throw new IllegalArgumentException(
          Key.RUNTIME_CLASS + ": '" + runtimeClass + "' is not a RuntimeClass name");
    }
    if (!List.of("Always", "IfNotPresent", "Never").contains(imagePullPolicy)) {
      throw new IllegalArgumentException(
          Key.IMAGE_PULL_POLICY + ": Always, IfNotPresent or Never, not '" + imagePullPolicy + "'");
    }
    nodeSelector.forEach(
        (k, v) -> {
          if (!LABEL_KEY.matcher(k).matches() || !LABEL_VALUE.matcher(v).matches()) {
            throw new IllegalArgumentException(
                Key.NODE_SELECTOR + ": '" + k + "=" + v + "' is not a node label");
          }
        });
    nodeSelector = Map.copyOf(nodeSelector);
    tolerations = List.copyOf(tolerations);
    if (storageClass != null && !DNS_SUBDOMAIN.matcher(storageClass).matches()) {
      throw new IllegalArgumentException(
          Key.STORAGE_CLASS + ": '" + storageClass + "' is not a StorageClass name");
    }
    if (agentImage.isBlank() || agentImage.chars().anyMatch(c -> c <= ' ')) {
      throw new IllegalArgumentException(
          Key.AGENT_IMAGE + ": '" + agentImage + "' is not an image");
    }
    if (!DNS_LABEL.matcher(boxNamespace).matches()) {
      throw new IllegalArgumentException(
          Key.BOX_NAMESPACE + ": '" + boxNamespace + "' is not a namespace name");
    }
    clusterRanges = List.copyOf(clusterRanges);
    if (!seccompProfile.equals("RuntimeDefault")
        && !LOCALHOST_PROFILE.matcher(seccompProfile).matches()) {
      throw new IllegalArgumentException(
          Key.SECCOMP_PROFILE
              + ": RuntimeDefault or localhost/<profile>, not '"
              + seccompProfile
              + "'");
    }
  }

  /**
   * Reads the settings from configured values; unset keys take their defaults.
   *
   * @throws IllegalArgumentException with a message for the user when a value is invalid
   */
  public static KubernetesSettings read(Map<String, String> values) {
    return new KubernetesSettings(
        orDefault(Key.NAMESPACE.in(values), DEFAULT_NAMESPACE),
        blankToNull(Key.RUNTIME_CLASS.in(values)),
        orDefault(Key.IMAGE_PULL_POLICY.in(values), "IfNotPresent"),
        pairs(Key.NODE_SELECTOR.in(values)),
        words(Key.TOLERATIONS.in(values)).stream().map(Toleration::parse).toList(),
        blankToNull(Key.STORAGE_CLASS.in(values)),
        orDefault(Key.AGENT_IMAGE.in(values), DEFAULT_AGENT_IMAGE),
        orDefault(Key.SECCOMP_PROFILE.in(values), "RuntimeDefault"),
        blankToNull(Key.KUBECONFIG.in(values)),
        orDefault(Key.BOX_NAMESPACE.in(values), DEFAULT_BOX_NAMESPACE),
        ranges(orDefault(Key.CLUSTER_RANGES.in(values), DEFAULT_CLUSTER_RANGES)),
        Key.NETWORK_OFF.choice(values, NetworkOff.NAMESPACE),
        Key.AGENT_PATH.choice(values, AgentPath.AUTO),
        Key.WORKLOAD.choice(values, Workload.POD));
  }

  /** The settings with their defaults. */
  public static KubernetesSettings defaults() {
    return read(Map.of());
  }

  private static List<Cidr> ranges(String text) {
    try {
      return words(text).stream().map(Cidr::parse).toList();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(Key.CLUSTER_RANGES + ": " + e.getMessage());
    }
  }

  private static Map<String, String> pairs(@Nullable String text) {
    Map<String, String> pairs = new LinkedHashMap<>();
    for (String word : words(text)) {
      int eq = word.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(Key.NODE_SELECTOR + ": '" + word + "' is not key=value");
      }
      pairs.put(word.substring(0, eq), word.substring(eq + 1));
    }
    return pairs;
  }

  private static List<String> words(@Nullable String text) {
    if (text == null || text.isBlank()) {
      return List.of();
    }
    return List.of(text.strip().split("\\s*,\\s*"));
  }

  private static String orDefault(@Nullable String value, String fallback) {
    return value == null || value.isBlank() ? fallback : value.strip();
  }

  private static @Nullable String blankToNull(@Nullable String value) {
    return value == null || value.isBlank() ? null : value.strip();
  }
}
