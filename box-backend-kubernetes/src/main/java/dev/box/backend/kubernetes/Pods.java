package dev.box.backend.kubernetes;

import dev.box.api.BoxSpec;
import dev.box.core.agent.AgentAddress;
import dev.box.core.backend.SandboxSpec;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.HttpURLConnection;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API calls for the sessions' objects in the sandbox namespace: each session's Secret, its
 * NetworkPolicy, its pod and, for a persistent session, its workspace's PersistentVolumeClaim, made
 * and removed together. Creating an object that exists already is not an error: a second replica
 * that creates the same session at the same moment takes what the first made.
 *
 * <p>Every session has a Secret named {@link #podName} (its record): it holds the agent's token of
 * the session's pod, and its {@link Labels#POD} label names that pod, which is the session's own
 * (of the same name) or a pod the session took from the {@link Pool}.
 *
 * @param client the cluster's API
 * @param settings the namespace and the pods' settings
 * @param tenant the tenant whose sessions these are ({@link Labels#tenant})
 * @param defaultImage the image of sessions that name none (or the reference's default), or null to
 *     run the reference's default
 * @param maker what makes and removes the pods ({@code k8s_workload})
 */
record Pods(
    KubernetesClient client,
    KubernetesSettings settings,
    String tenant,
    @Nullable String defaultImage,
    PodMaker maker) {
  private static final Logger log = LoggerFactory.getLogger(Pods.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * The size of a session's workspace emptyDir: the backend's spec carries no workspace quota, and
   * the kubelet evicts a pod whose workspace outgrows it.
   */
  static final int WORKSPACE_MB = 1024;

  /** The suffix of a persistent session's claim, after its pod's name. */
  static final String CLAIM_SUFFIX = "-workspace";

  /**
   * The pod of a session and its agent's token.
   *
   * @param name the pod's name
   * @param secret the agent's token, never compared: the record is a pair of values to pass on
   */
  @SuppressWarnings("ArrayRecordComponent")
  record Placed(String name, byte[] secret) {}

  /**
   * The pods of {@code settings}' workload on {@code client}.
   *
   * @throws IllegalArgumentException when the cluster does not serve what the workload needs
   */
  Pods(
      KubernetesClient client,
      KubernetesSettings settings,
      String tenant,
      @Nullable String defaultImage) {
    this(client, settings, tenant, defaultImage, PodMaker.of(client, settings));
  }

  /** The name of the pod of session {@code sessionId}, the same on every replica. */
  String podName(String sessionId) {
    return Labels.podName(tenant, sessionId);
  }

  /** The labels of the pod {@code name} and of its objects. */
  Map<String, String> labels(String name) {
    return Map.of(Labels.MANAGED_BY, Labels.BOX, Labels.TENANT, tenant, Labels.POD, name);
  }

  /**
   * Creates the Secret, the NetworkPolicy, the claim of a persistent session and the pod {@code
   * name} of session {@code spec} (or takes those that exist), and returns the pod: the one the
   * session's Secret names when another replica made that Secret first.
   */
  Placed create(String name, SandboxSpec spec) {
    Placed placed = createRecord(name, name, freshToken());
    if (!placed.name().equals(name)) {
      return placed;
    }
    String claim = spec.persistent() ? createClaim(name) : null;
    createPod(name, labels(name), Map.of(Labels.SESSION_ID, spec.sessionId()), spec, claim);
    return placed;
  }

  /**
   * Creates the NetworkPolicy and the pod {@code name} of the shape of {@code spec}, with {@code
   * labels}, {@code annotations} and the workspace on {@code claim} (null for an emptyDir); the
   * pod's Secret must exist.
   */
  void createPod(
      String name,
      Map<String, String> labels,
      Map<String, String> annotations,
      SandboxSpec spec,
      @Nullable String claim) {
    NetworkPolicies policies =
        new NetworkPolicies(namespace(), settings.boxNamespace(), settings.clusterRanges());
    createPolicy(policies.forPod(name, spec.network(), spec.egress()));
    PodShape shape =
        new PodShape(
            name,
            labels,
            annotations,
            image(spec.image()),
            spec.readOnlyRootfs(),
            spec.cpus(),
            spec.memoryMb(),
            WORKSPACE_MB,
            claim,
            spec.network());
    createPod(shape.pod(settings));
  }

  /** A new agent token. */
  static byte[] freshToken() {
    byte[] fresh = new byte[AgentAddress.SECRET_BYTES];
    RANDOM.nextBytes(fresh);
    return fresh;
  }

  /**
   * Creates the claim {@code <name>-workspace} of the persistent session whose pod is {@code name}
   * (or takes the one that exists: the session's files), of {@link #WORKSPACE_MB} in the operator's
   * StorageClass, and returns its name.
   */
  private String createClaim(String name) {
    String claim = name + CLAIM_SUFFIX;
    PersistentVolumeClaim made =
        new PersistentVolumeClaimBuilder()
            .withMetadata(metadata(claim, labels(name)))
            .withNewSpec()
            .withAccessModes("ReadWriteOnce")
            .withStorageClassName(settings.storageClass())
            .withNewResources()
            .withRequests(Map.of("storage", new Quantity(WORKSPACE_MB + "Mi")))
            .endResources()
            .endSpec()
            .build();
    createUnlessExists(
        () -> client.persistentVolumeClaims().inNamespace(namespace()).resource(made).create());
    return claim;
  }

  /** The metadata of the object {@code name} of the sandbox namespace, with {@code labels}. */
  private ObjectMeta metadata(String name, Map<String, String> labels) {
    return new ObjectMetaBuilder()
        .withName(name)
        .withNamespace(namespace())
        .withLabels(labels)
        .build();
  }

  /** The image a session runs: its own, or the server's default for one that names none. */
  String image(String requested) {
    String configured = defaultImage;
    if (configured != null && (requested.isBlank() || requested.equals(BoxSpec.DEFAULT_IMAGE))) {
      return configured;
    }
    return requested;
  }

  private String namespace() {
    return settings.namespace();
  }

  /**
   * Creates the Secret {@code name} that holds {@code token} for the pod {@code pod} and names it:
   * a session's record, or a pool pod's own Secret. Returns that pod if this call created the
   * Secret, else the pod and token of the Secret another replica created first.
   */
  Placed createRecord(String name, String pod, byte[] token) {
    return createSecret(name, pod, token, labels(pod));
  }

  /**
   * Creates the Secret {@code name} of a pool pod {@code pod}, holding its token and labelled as
   * the pool's ({@link Labels#POOL}): never a session's record, even once a session takes the pod.
   */
  void createPoolSecret(String pod, byte[] token) {
    Map<String, String> labels = new HashMap<>(labels(pod));
    labels.put(Labels.POOL, "pod");
    createSecret(pod, pod, token, labels);
  }

  private Placed createSecret(String name, String pod, byte[] token, Map<String, String> labels) {
    Secret made =
        new SecretBuilder()
            .withMetadata(metadata(name, labels))
            .withType("Opaque")
            .withImmutable(true)
            .withData(Map.of(PodShape.SECRET_KEY, Base64.getEncoder().encodeToString(token)))
            .build();
    try {
      client.secrets().inNamespace(namespace()).resource(made).create();
      return new Placed(pod, token);
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      Placed existing = placed(name);
      if (existing == null) {
        throw e;
      }
      return existing;
    }
  }

  /** The pod and token the Secret {@code name} holds, or null when it does not exist. */
  @Nullable Placed placed(String name) {
    Secret secret = client.secrets().inNamespace(namespace()).withName(name).get();
    if (secret == null
        || secret.getData() == null
        || secret.getData().get(PodShape.SECRET_KEY) == null) {
      return null;
    }
    String pod = secret.getMetadata().getLabels().getOrDefault(Labels.POD, name);
    return new Placed(pod, Base64.getDecoder().decode(secret.getData().get(PodShape.SECRET_KEY)));
  }

  /** Creates {@code policy}, or leaves the one that exists. */
  private void createPolicy(NetworkPolicy policy) {
    createUnlessExists(
        () ->
            client.network().networkPolicies().inNamespace(namespace()).resource(policy).create());
  }

  /** Has {@code pod} made, or leaves the one that exists. */
  private void createPod(Pod pod) {
    createUnlessExists(() -> maker.create(pod));
  }

  /** Runs {@code create}; an object that exists already (a conflict) is left as it is. */
  private static void createUnlessExists(Runnable create) {
    try {
      create.run();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
    }
  }

  /**
   * Waits until pod {@code name} runs and is ready, and returns its IP; a pod a controller makes
   * ({@link PodMaker#podFollows}) is waited for while it does not exist yet.
   *
   * @throws IllegalStateException when it failed, went, or did not run within {@code timeout}
   */
  String awaitRunning(String name, Duration timeout) throws InterruptedException {
    Pod ready =
        client
            .pods()
            .inNamespace(namespace())
            .withName(name)
            .waitUntilCondition(
                p -> p == null ? !maker.podFollows() : isReady(p) || isOver(p),
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
    if (ready == null) {
      throw new IllegalStateException("the pod " + name + " was deleted while it started");
    }
    if (!isReady(ready)) {
      throw new IllegalStateException(
          "the pod "
              + name
              + " ended before it ran: "
              + ready.getStatus().getPhase()
              + PodShape.endedBecause(ready));
    }
    return ready.getStatus().getPodIP();
  }

  static boolean isReady(Pod p) {
    return p.getStatus() != null
        && "Running".equals(p.getStatus().getPhase())
        && p.getStatus().getPodIP() != null
        && p.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  static boolean isOver(Pod p) {
    return p.getStatus() != null
        && ("Failed".equals(p.getStatus().getPhase())
            || "Succeeded".equals(p.getStatus().getPhase()));
  }

  /** The pod named {@code name}, or null. */
  @Nullable Pod get(String name) {
    return client.pods().inNamespace(namespace()).withName(name).get();
  }

  /**
   * Removes the pod (and its Sandbox, {@link AgentSandboxes}), its policy and the Secrets that name
   * it (its own, and the record of the session it serves) at once (no grace period); logs a
   * failure. A persistent session's claim stays ({@link #removeClaim}).
   */
  void remove(String name) {
    try {
      maker.remove(name);
      client.network().networkPolicies().inNamespace(namespace()).withName(name).delete();
      // Listed, then deleted one by one: the Role grants no deletecollection.
      for (Secret secret :
          client.secrets().inNamespace(namespace()).withLabels(labels(name)).list().getItems()) {
        client.secrets().inNamespace(namespace()).withName(secret.getMetadata().getName()).delete();
      }
    } catch (KubernetesClientException e) {
      log.warn("cannot remove the pod {} and its objects: {}", name, e.getMessage());
    }
  }

  /**
   * Removes the workspace claim of the pod {@code name}'s session, if it has one; logs a failure.
   */
  void removeClaim(String name) {
    try {
      client
          .persistentVolumeClaims()
          .inNamespace(namespace())
          .withName(name + CLAIM_SUFFIX)
          .delete();
    } catch (KubernetesClientException e) {
      log.warn("cannot remove the workspace claim of {}: {}", name, e.getMessage());
    }
  }
}
