package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;

/** Reading the keys of an action's {@code data} as LangBot's Python runtime reads them. */
final class ActionData {
  private ActionData() {}

  /**
   * The value of {@code key} as text: a string as it is, anything else as its JSON.
   *
   * @throws ActionError {@code KeyError: '<key>'} when the key is missing or null
   */
  static String required(JsonNode data, String key) {
    JsonNode value = data.get(key);
    if (value == null || value.isNull()) {
      throw ActionError.missingKey(key);
    }
    return text(value);
  }

  /** The value of {@code key} as {@link #required} reads it, or {@code fallback}. */
  static String optional(JsonNode data, String key, String fallback) {
    JsonNode value = data.get(key);
    if (value == null || value.isNull()) {
      return fallback;
    }
    return text(value);
  }

  private static String text(JsonNode value) {
    return value.isTextual() ? value.asText() : value.toString();
  }
}
