package dev.box.core.net;

import dev.box.api.Cidr;
import java.util.ArrayList;
import java.util.List;

/**
 * The operator's egress policy: what every network-on sandbox may reach beyond the internet.
 *
 * <p>A network-on sandbox reaches public addresses. It never reaches the {@link #FORBIDDEN} blocks
 * (loopback, link-local with cloud metadata, multicast, reserved) nor the host's own addresses,
 * whatever any setting says. {@link #PRIVATE} blocks (RFC 1918, carrier-grade NAT, unique local
 * IPv6) are unreachable unless {@code allow} opens them; {@code deny} closes further blocks.
 *
 * @param allow private blocks the operator opens to every sandbox
 * @param deny blocks no sandbox may reach, whatever its own rules say
 */
public record EgressPolicy(List<Cidr> allow, List<Cidr> deny) {

  /** Blocks no setting can open: the host's loopback, link-local, multicast and reserved. */
  public static final List<Cidr> FORBIDDEN =
      blocks(
          "0.0.0.0/8",
          "127.0.0.0/8",
          "169.254.0.0/16",
          "224.0.0.0/4",
          "240.0.0.0/4",
          "::/128",
          "::1/128",
          "fe80::/10",
          "ff00::/8");

  /** Blocks unreachable unless the operator allows them: the private networks around a host. */
  public static final List<Cidr> PRIVATE =
      blocks("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7");

  /** No private block open, nothing further denied. */
  public static final EgressPolicy DEFAULT = new EgressPolicy(List.of(), List.of());

  /**
   * Copies the lists and refuses an {@code allow} block that touches a forbidden one.
   *
   * @throws IllegalArgumentException naming the block and what it overlaps
   */
  public EgressPolicy {
    allow = List.copyOf(allow);
    deny = List.copyOf(deny);
    for (Cidr block : allow) {
      for (Cidr forbidden : FORBIDDEN) {
        if (block.overlaps(forbidden)) {
          throw new IllegalArgumentException(
              "egress_allow "
                  + block
                  + " overlaps "
                  + forbidden
                  + ", which no sandbox may reach (the host's loopback, link-local addresses"
                  + " such as cloud metadata, multicast and reserved blocks)");
        }
      }
    }
  }

  /**
   * Parses the operator's comma-separated settings {@code egress_allow} and {@code egress_deny}.
   *
   * @throws IllegalArgumentException naming the setting and the entry it cannot use
   */
  public static EgressPolicy parse(String allow, String deny) {
    return new EgressPolicy(list("egress_allow", allow), list("egress_deny", deny));
  }

  private static List<Cidr> list(String setting, String csv) {
    List<Cidr> out = new ArrayList<>();
    for (String entry : csv.split(",")) {
      if (!entry.isBlank()) {
        try {
          out.add(Cidr.parse(entry));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(setting + ": " + e.getMessage(), e);
        }
      }
    }
    return out;
  }

  private static List<Cidr> blocks(String... texts) {
    return java.util.Arrays.stream(texts).map(Cidr::parse).toList();
  }
}
