package dev.box.core.backend;

import java.util.Map;

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

  /** Copies {@code notChosen}. */
  public BackendChoice {
    notChosen = Map.copyOf(notChosen);
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
