package dev.box.backend.kubernetes;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.Cidr;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlock;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlockBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The NetworkPolicy of one session's pod. Whatever the mode, only Box's own pods reach the pod, and
 * only on the agent's port. Network off: no egress at all. Network on: egress anywhere but the
 * forbidden blocks (the cluster's own ranges, link-local addresses with the cloud's metadata
 * service, and the session's {@code deny_out}), plus the session's {@code allow_out} outside the
 * forbidden ranges, which a session can never open.
 *
 * <p>A NetworkPolicy is a request to the cluster's network plugin: a plugin that does not enforce
 * policies (flannel alone, for one) ignores it, and the backend's health says so rather than claim
 * the isolation (see docs/KUBERNETES.md).
 */
final class NetworkPolicies {
  /** The label Box's own pods carry, from which the agent's port is reachable. */
  static final String BOX_POD_LABEL = "app.kubernetes.io/name";

  private static final List<Cidr> EVERYWHERE = List.of(Cidr.parse("0.0.0.0/0"), Cidr.parse("::/0"));

  private static final List<Cidr> LINK_LOCAL =
      List.of(Cidr.parse("169.254.0.0/16"), Cidr.parse("fe80::/10"));

  private final String namespace;
  private final String boxNamespace;
  private final List<Cidr> clusterRanges;

  /**
   * @param namespace the namespace of the sandbox pods
   * @param boxNamespace the namespace of Box's own pods
   * @param clusterRanges the blocks the cluster's pods, services and API server live in
   */
  NetworkPolicies(String namespace, String boxNamespace, List<Cidr> clusterRanges) {
    this.namespace = namespace;
    this.boxNamespace = boxNamespace;
    this.clusterRanges = List.copyOf(clusterRanges);
  }

  /**
   * The policy of the pod {@code podName}. Network on, the cluster's DNS stays reachable (port 53
   * of the {@code kube-dns} pods), or no name would resolve.
   */
  NetworkPolicy forPod(String podName, BoxNetworkMode network, BoxEgress egress) {
    List<NetworkPolicyEgressRule> rules = new ArrayList<>();
    if (network == BoxNetworkMode.ON) {
      rules.add(clusterDns());
      List<Cidr> forbidden = new ArrayList<>(clusterRanges);
      forbidden.addAll(LINK_LOCAL);
      List<Cidr> denied = new ArrayList<>(forbidden);
      denied.addAll(egress.denyOut());
      for (Cidr everywhere : EVERYWHERE) {
        // An except must lie strictly inside its block: a deny_out of a whole family (the
        // allow-list's deny_out: ["0.0.0.0/0"]) drops the family's rule, not its except.
        if (denied.stream().noneMatch(d -> d.contains(everywhere))) {
          rules.add(rule(block(everywhere, denied)));
        }
      }
      for (Cidr allowed : egress.allowOut()) {
        if (forbidden.stream().noneMatch(f -> f.contains(allowed))) {
          rules.add(rule(block(allowed, forbidden)));
        }
      }
    }
    return new NetworkPolicyBuilder()
        .withNewMetadata()
        .withName(podName)
        .withNamespace(namespace)
        .withLabels(Map.of(Labels.MANAGED_BY, Labels.BOX))
        .endMetadata()
        .withNewSpec()
        .withNewPodSelector()
        .withMatchLabels(Map.of(Labels.POD, podName))
        .endPodSelector()
        .withPolicyTypes("Ingress", "Egress")
        .addNewIngress()
        .addNewFrom()
        .withNewNamespaceSelector()
        .withMatchLabels(Map.of("kubernetes.io/metadata.name", boxNamespace))
        .endNamespaceSelector()
        .withNewPodSelector()
        .withMatchLabels(Map.of(BOX_POD_LABEL, "box"))
        .endPodSelector()
        .endFrom()
        .addNewPort()
        .withProtocol("TCP")
        .withPort(new IntOrString(PodShape.AGENT_PORT))
        .endPort()
        .endIngress()
        .withEgress(rules)
        .endSpec()
        .build();
  }

  private static NetworkPolicyEgressRule clusterDns() {
    return new NetworkPolicyEgressRuleBuilder()
        .addNewTo()
        .withNewNamespaceSelector()
        .withMatchLabels(Map.of("kubernetes.io/metadata.name", "kube-system"))
        .endNamespaceSelector()
        .withNewPodSelector()
        .withMatchLabels(Map.of("k8s-app", "kube-dns"))
        .endPodSelector()
        .endTo()
        .addNewPort()
        .withProtocol("UDP")
        .withPort(new IntOrString(53))
        .endPort()
        .addNewPort()
        .withProtocol("TCP")
        .withPort(new IntOrString(53))
        .endPort()
        .build();
  }

  private static NetworkPolicyEgressRule rule(IPBlock block) {
    return new NetworkPolicyEgressRuleBuilder().addNewTo().withIpBlock(block).endTo().build();
  }

  /** {@code cidr} less the blocks of {@code except} inside it (of its family). */
  private static IPBlock block(Cidr cidr, List<Cidr> except) {
    List<String> inside = new ArrayList<>();
    for (Cidr e : except) {
      if (e.isIpv4() == cidr.isIpv4() && cidr.contains(e) && !e.equals(cidr)) {
        inside.add(e.toString());
      }
    }
    return new IPBlockBuilder().withCidr(cidr.toString()).withExcept(inside).build();
  }
}
