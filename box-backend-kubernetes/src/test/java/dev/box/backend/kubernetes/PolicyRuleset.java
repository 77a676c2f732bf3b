package dev.box.backend.kubernetes;

import dev.box.api.Cidr;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlock;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicySpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The nftables ruleset that enforces a namespace's NetworkPolicies on one pod, loaded into the
 * pod's network namespace by {@link StandInNetworkPolicies}. Kubernetes' semantics: a pod that no
 * policy of a type (Ingress, Egress) selects is open in that direction; a selected one admits the
 * union of the rules of every policy that selects it, and rejects the rest. Loopback and the return
 * traffic of admitted connections always pass.
 *
 * <p>Peers are resolved to the addresses of the pods the stand-in runs: a {@code podSelector} to
 * the matching pods of the policy's namespace, a {@code namespaceSelector} against the labels of
 * that namespace (the only one whose pods run here; any other namespace has no pods). What cannot
 * be enforced here, a named port, admits nothing: a rule is narrowed, never widened.
 *
 * <p>Denied traffic is rejected ({@code admin-prohibited}: the sender sees "no route to host" at
 * once) rather than dropped as most plugins do, so a test tells a denial from a listener that is
 * not there without waiting for a timeout.
 */
final class PolicyRuleset {
  /** The table the ruleset lives in, in the pod's network namespace. */
  static final String TABLE = "inet box_policy";

  /** The ruleset of a pod that no policy isolates: no table at all. */
  static final String OPEN = "table " + TABLE + "\ndelete table " + TABLE + "\n";

  /** A pod the stand-in runs: its name, labels and IP. */
  record Member(String name, Map<String, String> labels, String ip) {
    Member {
      labels = Map.copyOf(labels);
    }
  }

  private final List<NetworkPolicy> policies;
  private final List<Member> members;
  private final Map<String, String> namespaceLabels;
  private final String node;

  /**
   * @param policies the NetworkPolicies of the namespace
   * @param members the pods of the namespace that run, with their IPs
   * @param namespaceLabels the labels of the namespace
   * @param node the address the node reaches its pods from, which every pod admits
   */
  PolicyRuleset(
      List<NetworkPolicy> policies,
      List<Member> members,
      Map<String, String> namespaceLabels,
      String node) {
    this.policies = List.copyOf(policies);
    this.members = List.copyOf(members);
    this.namespaceLabels = Map.copyOf(namespaceLabels);
    this.node = node;
  }

  /**
   * The ruleset of {@code pod}, as {@code nft -f} reads it; {@link #OPEN} when nothing isolates it.
   */
  String of(Member pod) {
    List<NetworkPolicySpec> selecting =
        policies.stream()
            .map(NetworkPolicy::getSpec)
            .filter(spec -> matches(spec.getPodSelector(), pod.labels()))
            .toList();
    List<NetworkPolicySpec> ingress = selecting.stream().filter(s -> has(s, "Ingress")).toList();
    List<NetworkPolicySpec> egress = selecting.stream().filter(s -> has(s, "Egress")).toList();
    if (ingress.isEmpty() && egress.isEmpty()) {
      return OPEN;
    }
    StringBuilder text = new StringBuilder(OPEN).append("table ").append(TABLE).append(" {\n");
    if (!ingress.isEmpty()) {
      List<String> accepts = new ArrayList<>(List.of("ip saddr " + node + " accept"));
      for (NetworkPolicySpec spec : ingress) {
        spec.getIngress().forEach(r -> accepts.addAll(accepts("saddr", r.getFrom(), r.getPorts())));
      }
      chain(text, "ingress", "input", "iif", accepts);
    }
    if (!egress.isEmpty()) {
      List<String> accepts = new ArrayList<>();
      for (NetworkPolicySpec spec : egress) {
        spec.getEgress().forEach(r -> accepts.addAll(accepts("daddr", r.getTo(), r.getPorts())));
      }
      chain(text, "egress", "output", "oif", accepts);
    }
    return text.append("}\n").toString();
  }

  private static void chain(
      StringBuilder text, String name, String hook, String loopback, List<String> accepts) {
    text.append("  chain ").append(name).append(" {\n");
    text.append("    type filter hook ").append(hook).append(" priority filter; policy drop;\n");
    text.append("    ").append(loopback).append(" \"lo\" accept\n");
    text.append("    ct state established,related accept\n");
    accepts.forEach(a -> text.append("    ").append(a).append('\n'));
    text.append("    reject with icmpx type admin-prohibited\n  }\n");
  }

  /**
   * Whether {@code spec} is of {@code type}: its policyTypes, else Ingress always and Egress when
   * it has egress rules, as the API server defaults them.
   */
  private static boolean has(NetworkPolicySpec spec, String type) {
    if (!spec.getPolicyTypes().isEmpty()) {
      return spec.getPolicyTypes().contains(type);
    }
    return type.equals("Ingress") || !spec.getEgress().isEmpty();
  }

  /** The accepting rules of one policy rule: each peer address with each port. */
  private List<String> accepts(
      String direction, List<NetworkPolicyPeer> peers, List<NetworkPolicyPort> ports) {
    List<String> addresses = new ArrayList<>();
    if (peers.isEmpty()) {
      addresses.add("");
    }
    for (NetworkPolicyPeer peer : peers) {
      addresses.addAll(addresses(direction, peer));
    }
    List<String> protocols = new ArrayList<>();
    if (ports.isEmpty()) {
      protocols.add("");
    }
    for (NetworkPolicyPort port : ports) {
      String match = port(port);
      if (match != null) {
        protocols.add(match);
      }
    }
    List<String> accepts = new ArrayList<>();
    for (String address : addresses) {
      for (String protocol : protocols) {
        accepts.add((address + " " + protocol).strip() + " accept");
      }
    }
    return accepts;
  }

  /** The address matches of {@code peer}: its block less its exceptions, or its pods' IPs. */
  private List<String> addresses(String direction, NetworkPolicyPeer peer) {
    IPBlock block = peer.getIpBlock();
    if (block != null) {
      Cidr cidr = Cidr.parse(block.getCidr());
      StringBuilder match = new StringBuilder(family(cidr) + direction + " " + cidr);
      for (String except : block.getExcept()) {
        Cidr e = Cidr.parse(except);
        match.append(' ').append(family(e)).append(direction).append(" != ").append(e);
      }
      return List.of(match.toString());
    }
    if (peer.getPodSelector() == null && peer.getNamespaceSelector() == null) {
      return List.of();
    }
    if (peer.getNamespaceSelector() != null
        && !matches(peer.getNamespaceSelector(), namespaceLabels)) {
      return List.of();
    }
    return members.stream()
        .filter(m -> peer.getPodSelector() == null || matches(peer.getPodSelector(), m.labels()))
        .map(m -> "ip " + direction + " " + m.ip())
        .toList();
  }

  private static String family(Cidr cidr) {
    return cidr.isIpv4() ? "ip " : "ip6 ";
  }

  /** The match of {@code port}: its protocol, its port or range; null for a named port. */
  private static @Nullable String port(NetworkPolicyPort port) {
    String protocol =
        (port.getProtocol() == null ? "TCP" : port.getProtocol()).toLowerCase(Locale.ROOT);
    IntOrString number = port.getPort();
    if (number == null) {
      return "meta l4proto " + protocol;
    }
    if (number.getIntVal() == null) {
      return null;
    }
    String range =
        port.getEndPort() == null
            ? number.getIntVal().toString()
            : number.getIntVal() + "-" + port.getEndPort();
    return protocol + " dport " + range;
  }

  /** Whether {@code labels} match {@code selector} (an empty selector matches every set). */
  static boolean matches(@Nullable LabelSelector selector, Map<String, String> labels) {
    if (selector == null) {
      return true;
    }
    for (var label : selector.getMatchLabels().entrySet()) {
      if (!label.getValue().equals(labels.get(label.getKey()))) {
        return false;
      }
    }
    for (LabelSelectorRequirement r : selector.getMatchExpressions()) {
      String value = labels.get(r.getKey());
      boolean met =
          switch (r.getOperator()) {
            case "In" -> value != null && r.getValues().contains(value);
            case "NotIn" -> value == null || !r.getValues().contains(value);
            case "Exists" -> value != null;
            case "DoesNotExist" -> value == null;
            default -> false;
          };
      if (!met) {
        return false;
      }
    }
    return true;
  }
}
