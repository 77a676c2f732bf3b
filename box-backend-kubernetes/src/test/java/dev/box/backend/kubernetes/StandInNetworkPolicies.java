package dev.box.backend.kubernetes;

import dev.box.backend.kubernetes.PolicyRuleset.Member;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stand-in kubelet's network plugin: it enforces the NetworkPolicies of its namespace on the
 * pods it runs, with an nftables ruleset ({@link PolicyRuleset}) in each pod container's network
 * namespace ({@code nsenter -t <pid> -n nft -f -}, as root). Every ruleset is recomputed, and
 * loaded where it changed, when a pod starts (before the kubelet reports it running, so a pod is
 * never reported running without its policies) or stops, and when a policy or a pod's labels
 * change; one worker thread does it all, in order.
 *
 * <p>The node: every pod admits whatever comes from the node, the gateway of the pods' Docker
 * network, whatever the policies say, as many network plugins do for the kubelet's probes (Calico
 * by default). It is also what lets Box, which runs on this host in the tests and in {@code
 * scripts/dev-cluster}, reach the agents: on a real cluster Box is a pod that the policies admit by
 * its labels. A pod's egress to the node is governed by its policies like any other.
 *
 * <p>A pod whose ruleset cannot be loaded when it starts is not reported running: the kubelet fails
 * it. A later load that fails (the pod's container ending meanwhile) is logged.
 */
final class StandInNetworkPolicies implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StandInNetworkPolicies.class);

  /** A pod container the policies apply to: its network namespace is its process's. */
  private record Endpoint(String container, String pid, String ip) {}

  private final KubernetesClient client;
  private final String namespace;
  private final String node;
  private final Map<String, Endpoint> running = new ConcurrentHashMap<>();
  private final Map<String, String> loaded = new HashMap<>();
  private final ExecutorService worker = Executors.newSingleThreadExecutor();
  private final SharedIndexInformer<NetworkPolicy> policies;
  private final SharedIndexInformer<Pod> pods;

  /**
   * Starts watching the policies and pods of {@code namespace}.
   *
   * @param network the Docker network of the pods, whose gateway is the node
   */
  StandInNetworkPolicies(KubernetesClient client, String namespace, String network)
      throws IOException {
    this.client = client;
    this.namespace = namespace;
    this.node =
        Docker.run(
                List.of(
                    "network",
                    "inspect",
                    "--format",
                    "{{(index .IPAM.Config 0).Gateway}}",
                    network))
            .strip();
    this.policies =
        client.network().networkPolicies().inNamespace(namespace).inform(new Refresh<>());
    this.pods = client.pods().inNamespace(namespace).inform(new Refresh<>());
  }

  /** Re-applies every ruleset on any change of what it watches. */
  private final class Refresh<T extends HasMetadata> implements ResourceEventHandler<T> {
    @Override
    public void onAdd(T added) {
      refresh();
    }

    @Override
    public void onUpdate(T before, T after) {
      // A pod's status changes often, and only its labels matter here.
      if (!(after instanceof Pod)
          || !before.getMetadata().getLabels().equals(after.getMetadata().getLabels())) {
        refresh();
      }
    }

    @Override
    public void onDelete(T deleted, boolean finalStateUnknown) {
      refresh();
    }
  }

  /**
   * Enforces the policies on pod {@code pod}, whose container {@code container} has started with
   * address {@code ip}, and admits its address where policies select it.
   *
   * @throws IOException if the container is not running (it ended at once)
   * @throws IllegalStateException if its ruleset cannot be loaded
   */
  void started(String pod, String container, String ip) throws IOException, InterruptedException {
    String pid = Docker.run(List.of("inspect", "--format", "{{.State.Pid}}", container)).strip();
    if (pid.equals("0")) {
      throw new IOException(container + " is not running");
    }
    running.put(pod, new Endpoint(container, pid, ip));
    try {
      worker.submit(() -> applyAll(pod)).get(2, TimeUnit.MINUTES);
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new IllegalStateException(
          "cannot enforce the NetworkPolicies of pod " + pod + ": " + cause.getMessage(), cause);
    }
  }

  /** Forgets pod {@code pod}, whose container ended or went, and withdraws its address. */
  void stopped(String pod) {
    if (running.remove(pod) != null) {
      refresh();
    }
  }

  private void refresh() {
    try {
      worker.execute(
          () -> {
            try {
              applyAll(null);
            } catch (IOException | RuntimeException e) {
              log.warn("cannot refresh the NetworkPolicies: {}", e.toString());
            }
          });
    } catch (RejectedExecutionException closed) {
      // Closing: the pods go with their containers.
    }
  }

  /**
   * Loads the ruleset of every running pod where it changed; a failure for {@code mustLoad} is
   * thrown, others are logged. Runs on the worker only.
   */
  private Void applyAll(@Nullable String mustLoad) throws IOException {
    Map<String, Map<String, String>> labels = new HashMap<>();
    for (Pod p : client.pods().inNamespace(namespace).list().getItems()) {
      labels.put(p.getMetadata().getName(), p.getMetadata().getLabels());
    }
    List<Member> members = new ArrayList<>();
    running.forEach(
        (name, e) -> {
          if (labels.containsKey(name)) {
            members.add(new Member(name, labels.get(name), e.ip()));
          }
        });
    PolicyRuleset rules =
        new PolicyRuleset(
            client.network().networkPolicies().inNamespace(namespace).list().getItems(),
            members,
            namespaceLabels(),
            node);
    loaded.keySet().retainAll(running.keySet());
    for (Member member : members) {
      String ruleset = rules.of(member);
      if (ruleset.equals(loaded.getOrDefault(member.name(), PolicyRuleset.OPEN))) {
        continue;
      }
      Endpoint endpoint = running.get(member.name());
      try {
        if (endpoint != null) {
          load(endpoint.pid(), ruleset);
          loaded.put(member.name(), ruleset);
        }
      } catch (IOException e) {
        if (member.name().equals(mustLoad)) {
          throw e;
        }
        log.warn("cannot load the NetworkPolicies of pod {}: {}", member.name(), e.toString());
      }
    }
    return null;
  }

  /**
   * The labels of the namespace: those of its Namespace object, if there is one, and always {@code
   * kubernetes.io/metadata.name}, which the API server sets on every namespace.
   */
  private Map<String, String> namespaceLabels() {
    Map<String, String> labels = new HashMap<>();
    Namespace object = client.namespaces().withName(namespace).get();
    if (object != null) {
      labels.putAll(object.getMetadata().getLabels());
    }
    labels.put("kubernetes.io/metadata.name", namespace);
    return labels;
  }

  /** Loads {@code ruleset} into the network namespace of process {@code pid}, atomically. */
  private static void load(String pid, String ruleset) throws IOException {
    Process nft =
        new ProcessBuilder("nsenter", "-t", pid, "-n", "nft", "-f", "-")
            .redirectErrorStream(true)
            .start();
    try (var in = nft.getOutputStream()) {
      in.write(ruleset.getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(nft.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!nft.waitFor(30, TimeUnit.SECONDS)) {
        nft.destroyForcibly();
        throw new IOException("nft did not end within 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      nft.destroyForcibly();
      throw new IOException("interrupted", e);
    }
    if (nft.exitValue() != 0) {
      throw new IOException("nft -f: " + out.strip());
    }
  }

  /** Whether both informers have their first lists. */
  boolean hasSynced() {
    return policies.hasSynced() && pods.hasSynced();
  }

  @Override
  public void close() {
    policies.close();
    pods.close();
    worker.shutdownNow();
    try {
      worker.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
