package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code GET /v1/health}: which backend serves sessions, what it enforces and what it
 * can do, and why the other candidates were not chosen.
 *
 * @param name the backend's name, or null when none is selected
 * @param available whether it can run sandboxes now
 * @param reason how it runs, or why it is unavailable
 * @param enforced for each limit ({@code memory}, {@code pids}, {@code cpu}, {@code kill}, ...) how
 *     it is enforced, or {@code none}
 * @param capabilities the optional features the backend supports ({@link BoxCapabilities})
 * @param notChosen for each other backend that selection considered, why it was not chosen
 */
public record BoxBackendHealth(
    @Nullable String name,
    boolean available,
    String reason,
    Map<String, String> enforced,
    List<String> capabilities,
    Map<String, String> notChosen) {

  /** Copies the collections; {@code notChosen} keeps its order. */
  public BoxBackendHealth {
    enforced = Map.copyOf(enforced);
    capabilities = List.copyOf(capabilities);
    notChosen = orderedCopy(notChosen);
  }

  /** An unmodifiable copy in selection's order; like {@link Map#copyOf}, it refuses nulls. */
  private static Map<String, String> orderedCopy(Map<String, String> map) {
    Map<String, String> copy = new LinkedHashMap<>();
    map.forEach((name, why) -> copy.put(Objects.requireNonNull(name), Objects.requireNonNull(why)));
    return Collections.unmodifiableMap(copy);
  }

  /** A health answer with no capabilities and no other candidates. */
  public BoxBackendHealth(
      @Nullable String name, boolean available, String reason, Map<String, String> enforced) {
    this(name, available, reason, enforced, List.of(), Map.of());
  }

  /** Reads the JSON form; the collections added after the first version default to empty. */
  @JsonCreator
  static BoxBackendHealth fromJson(
      @JsonProperty("name") @Nullable String name,
      @JsonProperty("available") boolean available,
      @JsonProperty("reason") @Nullable String reason,
      @JsonProperty("enforced") @Nullable Map<String, String> enforced,
      @JsonProperty("capabilities") @Nullable List<String> capabilities,
      @JsonProperty("not_chosen") @Nullable Map<String, String> notChosen) {
    return new BoxBackendHealth(
        name,
        available,
        reason == null ? "" : reason,
        enforced == null ? Map.of() : enforced,
        capabilities == null ? List.of() : capabilities,
        notChosen == null ? Map.of() : notChosen);
  }
}
