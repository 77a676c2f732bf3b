package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The egress rules of one network-on session, as E2B's {@code allowOut} and {@code denyOut}: an
 * address in {@code allowOut} is reachable even when a {@code denyOut} block covers it, so {@code
 * deny_out: ["0.0.0.0/0"]} with a short {@code allow_out} is an allow-list.
 *
 * <p>These rules narrow what the operator allows; they never widen it. The host, its loopback,
 * link-local addresses (cloud metadata) and the other sandboxes stay unreachable whatever a spec
 * says, and private ranges are reachable only where the operator's {@code egress_allow} opens them.
 *
 * @param allowOut blocks reachable despite {@code denyOut}
 * @param denyOut blocks this session may not reach
 */
public record BoxEgress(List<Cidr> allowOut, List<Cidr> denyOut) {

  /** No rules of the session's own: the operator's policy applies as it is. */
  public static final BoxEgress NONE = new BoxEgress(List.of(), List.of());

  /** Copies both lists. */
  public BoxEgress {
    allowOut = List.copyOf(allowOut);
    denyOut = List.copyOf(denyOut);
  }

  /** Whether the session adds no rules. */
  public boolean isEmpty() {
    return allowOut.isEmpty() && denyOut.isEmpty();
  }

  /**
   * Parses a list of CIDR blocks or IP addresses, as the field {@code field} of a spec.
   *
   * @throws BoxValidationException naming the field and the entry that is not one
   */
  public static List<Cidr> parseAll(String field, List<String> entries) {
    if (entries.size() > 256) {
      throw new BoxValidationException(field + " may hold at most 256 entries");
    }
    List<Cidr> blocks = new ArrayList<>();
    for (String entry : entries) {
      if (entry == null) {
        throw new BoxValidationException(field + " entries must be strings");
      }
      try {
        blocks.add(Cidr.parse(entry));
      } catch (IllegalArgumentException e) {
        throw new BoxValidationException(field + ": " + e.getMessage());
      }
    }
    return blocks;
  }

  @JsonCreator
  static BoxEgress fromJson(
      @JsonProperty("allow_out") @Nullable List<String> allowOut,
      @JsonProperty("deny_out") @Nullable List<String> denyOut) {
    return new BoxEgress(
        parseAll("egress.allow_out", allowOut == null ? List.of() : allowOut),
        parseAll("egress.deny_out", denyOut == null ? List.of() : denyOut));
  }

  @Override
  public String toString() {
    return "allow_out=" + allowOut + " deny_out=" + denyOut;
  }
}
