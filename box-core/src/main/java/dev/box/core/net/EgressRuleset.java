package dev.box.core.net;

import dev.box.api.BoxEgress;
import dev.box.api.Cidr;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The nftables ruleset that enforces egress inside one sandbox's network namespace.
 *
 * <p>Outgoing packets are judged in this order, the first match deciding: loopback inside the
 * sandbox passes; DNS to the sandbox's resolvers passes; the forbidden blocks and the host's own
 * addresses are rejected; the operator's denials are rejected; private blocks are rejected unless
 * the operator allows them; the session's {@code allow_out} passes; the session's {@code deny_out}
 * is rejected; everything else (the internet, and private blocks the operator opened) passes. So a
 * session narrows what the operator allows and never widens it. Rejection answers at once (ICMP
 * administratively prohibited), so a connect fails fast instead of hanging. Incoming packets pass
 * only on loopback or as part of a connection the sandbox opened.
 *
 * <p>The text holds only canonical addresses rendered by {@link Cidr}; it reaches {@code nft} on
 * its standard input, never on a command line.
 */
public final class EgressRuleset {
  /** The table's name inside the sandbox's namespace. */
  public static final String TABLE = "box_egress";

  private static final String REJECT = "reject with icmpx type admin-prohibited";

  private EgressRuleset() {}

  /**
   * Renders the ruleset.
   *
   * @param operator the operator's policy
   * @param session the session's own rules
   * @param hostAddresses the addresses of the host the sandbox's traffic leaves from
   * @param alsoForbidden further blocks to reject first (a user-mode network's gateway)
   * @param resolvers addresses that may be asked DNS questions on port 53
   */
  public static String render(
      EgressPolicy operator,
      BoxEgress session,
      List<Cidr> hostAddresses,
      List<Cidr> alsoForbidden,
      List<Cidr> resolvers) {
    StringBuilder out = new StringBuilder();
    out.append("table inet ").append(TABLE).append(" {\n");
    out.append("  chain output {\n");
    out.append("    type filter hook output priority 0; policy accept;\n");
    out.append("    oifname \"lo\" accept\n");
    for (String family : List.of("ip", "ip6")) {
      boolean v4 = family.equals("ip");
      rule(out, family, pick(resolvers, v4), "meta l4proto { tcp, udp } th dport 53 accept");
      List<Cidr> forbidden =
          Stream.of(EgressPolicy.FORBIDDEN, hostAddresses, alsoForbidden)
              .flatMap(List::stream)
              .toList();
      rule(out, family, pick(forbidden, v4), REJECT);
      rule(out, family, pick(operator.deny(), v4), REJECT);
      List<Cidr> opened = pick(operator.allow(), v4);
      rule(
          out,
          family,
          pick(EgressPolicy.PRIVATE, v4),
          (opened.isEmpty() ? "" : family + " daddr != " + set(opened) + " ") + REJECT);
      rule(out, family, pick(session.allowOut(), v4), "accept");
      rule(out, family, pick(session.denyOut(), v4), REJECT);
    }
    out.append("  }\n");
    out.append("  chain input {\n");
    out.append("    type filter hook input priority 0; policy drop;\n");
    out.append("    iifname \"lo\" accept\n");
    out.append("    ct state established,related accept\n");
    out.append("  }\n");
    out.append("}\n");
    return out.toString();
  }

  private static void rule(StringBuilder out, String family, List<Cidr> blocks, String verdict) {
    if (blocks.isEmpty()) {
      return;
    }
    out.append("    ").append(family).append(" daddr ").append(set(blocks));
    out.append(' ').append(verdict).append('\n');
  }

  private static String set(List<Cidr> blocks) {
    return "{ " + String.join(", ", blocks.stream().map(Cidr::toString).toList()) + " }";
  }

  /**
   * The blocks of one family, without those inside another one of the list: nftables refuses an
   * anonymous set whose intervals overlap.
   */
  static List<Cidr> pick(List<Cidr> blocks, boolean v4) {
    List<Cidr> family = blocks.stream().filter(b -> b.isIpv4() == v4).distinct().toList();
    List<Cidr> kept = new ArrayList<>();
    for (Cidr block : family) {
      boolean covered =
          family.stream().anyMatch(other -> !other.equals(block) && other.contains(block));
      if (!covered) {
        kept.add(block);
      }
    }
    return kept;
  }
}
