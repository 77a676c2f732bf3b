package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import java.util.HashSet;
import java.util.Set;

/**
 * The body of {@code PUT /sandboxes/{id}/network} ({@code SandboxNetworkUpdateConfig}): the whole
 * network the sandbox is to have, an omitted field cleared. Read with create's rules: IP addresses
 * and CIDR blocks, no domain names (400); {@code egressProxy} and {@code rules} refused (501).
 *
 * <p>Box sets a sandbox's network when its sandbox starts (the firewall of its network namespace,
 * the container's network) and cannot change it while it runs, so an update is served only when it
 * asks for the network the sandbox has.
 *
 * @param network whether the sandbox is to reach the internet
 * @param egress its egress rules
 */
record NetworkUpdate(BoxNetworkMode network, BoxEgress egress) {
  private static final Set<String> FIELDS =
      Set.of("allow_internet_access", "allowOut", "denyOut", "egressProxy", "rules");

  /** Reads {@code body}; throws E2B's 400 or 501 for what Box cannot take. */
  static NetworkUpdate read(JsonNode body) {
    CreateRequest.requireFields(body, FIELDS);
    JsonNode internet = body.path("allow_internet_access");
    if (!internet.isMissingNode() && !internet.isBoolean()) {
      throw ApiError.badRequest("allow_internet_access must be true or false");
    }
    boolean on = internet.asBoolean(true);
    ObjectNode rules = ((ObjectNode) body).deepCopy();
    rules.remove("allow_internet_access");
    return new NetworkUpdate(
        on ? BoxNetworkMode.ON : BoxNetworkMode.OFF, CreateRequest.egress(rules, on));
  }

  /** Whether {@code spec} has this network already: the same access, the same rules. */
  boolean matches(BoxSpec spec) {
    return spec.network() == network
        && new HashSet<>(spec.egress().allowOut()).equals(new HashSet<>(egress.allowOut()))
        && new HashSet<>(spec.egress().denyOut()).equals(new HashSet<>(egress.denyOut()));
  }
}
