package dev.box.core.backend;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A backend as selection chose it.
 *
 * @param backend the backend that serves sessions
 * @param requested the name selection was asked for ({@code local}, {@code docker}, ...)
 * @param why how it was chosen
 * @param notChosen for each other candidate selection considered, why it was passed over
 */
public record BackendChoice(
    SandboxBackend backend, String requested, String why, Map<String, String> notChosen) {

  /** Copies {@code notChosen}, keeping its order. */
  public BackendChoice {
    notChosen = orderedCopy(notChosen);
  }

  /** An unmodifiable copy in selection's order; like {@link Map#copyOf}, it refuses nulls. */
  private static Map<String, String> orderedCopy(Map<String, String> map) {
    Map<String, String> copy = new LinkedHashMap<>();
    map.forEach((name, why) -> copy.put(Objects.requireNonNull(name), Objects.requireNonNull(why)));
    return Collections.unmodifiableMap(copy);
  }

  /**
   * Chooses a backend by name ({@code local}, {@code docker}, ...), as {@code --backend} and
   * LangBot's {@code box.backend} name it.
   */
  @FunctionalInterface
  public interface Selector {
    /**
     * Opens the backend {@code name}; an unknown name gives an unavailable backend that says so.
     */
    BackendChoice select(String name);
  }
}
