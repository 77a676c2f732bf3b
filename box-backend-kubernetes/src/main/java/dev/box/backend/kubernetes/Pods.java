package dev.box.backend.kubernetes;

import dev.box.api.BoxSpec;
import dev.box.core.agent.AgentAddress;
import dev.box.core.backend.SandboxSpec;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.HttpURLConnection;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API calls for the sessions' objects in the sandbox namespace: each session's Secret, its
 * NetworkPolicy and its pod, made and removed together. Creating an object that exists already is
 * not an error: a second replica that creates the same session at the same moment takes what the
 * first made.
 *
 * @param client the cluster's API
 * @param settings the namespace and the pods' settings
 * @param tenant the tenant whose sessions these are ({@link Labels#tenant})
 * @param defaultImage the image of sessions that name none (or the reference's default), or null to
 *     run the reference's default
 */
record Pods(
    KubernetesClient client,
    KubernetesSettings settings,
    String tenant,
    @Nullable String defaultImage) {
  private static final Logger log = LoggerFactory.getLogger(Pods.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * The size of a session's workspace emptyDir: the backend's spec carries no workspace quota, and
   * the kubelet evicts a pod whose workspace outgrows it.
   */
  static final int WORKSPACE_MB = 1024;

  /** The name of the pod of session {@code sessionId}, the same on every replica. */
  String podName(String sessionId) {
    return Labels.podName(tenant, sessionId);
  }

  /**
   * Creates the Secret, the NetworkPolicy and the pod {@code name} of session {@code spec} (or
   * takes those that exist), and returns the secret of the pod's agent.
   */
  byte[] create(String name, SandboxSpec spec) {
    Map<String, String> labels =
        Map.of(Labels.MANAGED_BY, Labels.BOX, Labels.TENANT, tenant, Labels.POD, name);
    byte[] fresh = new byte[AgentAddress.SECRET_BYTES];
    RANDOM.nextBytes(fresh);
    byte[] secret = createSecret(name, labels, fresh);
    NetworkPolicies policies =
        new NetworkPolicies(namespace(), settings.boxNamespace(), settings.clusterRanges());
    createPolicy(policies.forPod(name, spec.network(), spec.egress()));
    PodShape shape =
        new PodShape(
            name,
            labels,
            Map.of(Labels.SESSION_ID, spec.sessionId()),
            image(spec.image()),
            spec.readOnlyRootfs(),
            spec.cpus(),
            spec.memoryMb(),
            WORKSPACE_MB,
            null,
            spec.network());
    createPod(shape.pod(settings));
    return secret;
  }

  /** The image a session runs: its own, or the server's default for one that names none. */
  private String image(String requested) {
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
   * The secret of pod {@code name}: the one {@code secret} if this call created it, else the one
   * another replica created first.
   */
  private byte[] createSecret(String name, Map<String, String> labels, byte[] secret) {
    Secret made =
        new SecretBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace())
            .withLabels(labels)
            .endMetadata()
            .withType("Opaque")
            .withImmutable(true)
            .withData(Map.of(PodShape.SECRET_KEY, Base64.getEncoder().encodeToString(secret)))
            .build();
    try {
      client.secrets().inNamespace(namespace()).resource(made).create();
      return secret;
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      Secret existing = client.secrets().inNamespace(namespace()).withName(name).get();
      if (existing == null || existing.getData() == null) {
        throw e;
      }
      return Base64.getDecoder().decode(existing.getData().get(PodShape.SECRET_KEY));
    }
  }

  /** Creates {@code policy}, or leaves the one that exists. */
  private void createPolicy(NetworkPolicy policy) {
    try {
      client.network().networkPolicies().inNamespace(namespace()).resource(policy).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
    }
  }

  /** Creates {@code pod}, or leaves the one that exists. */
  private void createPod(Pod pod) {
    try {
      client.pods().inNamespace(namespace()).resource(pod).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
    }
  }

  /**
   * Waits until pod {@code name} runs and is ready, and returns its IP.
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
                p -> p == null || isReady(p) || isOver(p),
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

  private static boolean isOver(Pod p) {
    return p.getStatus() != null
        && ("Failed".equals(p.getStatus().getPhase())
            || "Succeeded".equals(p.getStatus().getPhase()));
  }

  /** The pod named {@code name}, or null. */
  @Nullable Pod get(String name) {
    return client.pods().inNamespace(namespace()).withName(name).get();
  }

  /** Removes the pod, its policy and its secret at once (no grace period); logs a failure. */
  void remove(String name) {
    try {
      client.pods().inNamespace(namespace()).withName(name).withGracePeriod(0).delete();
      client.network().networkPolicies().inNamespace(namespace()).withName(name).delete();
      client.secrets().inNamespace(namespace()).withName(name).delete();
    } catch (KubernetesClientException e) {
      log.warn("cannot remove the pod {} and its objects: {}", name, e.getMessage());
    }
  }
}
