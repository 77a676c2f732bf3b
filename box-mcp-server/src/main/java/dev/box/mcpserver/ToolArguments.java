package dev.box.mcpserver;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The arguments of one tool call, read with the types the tool's input schema declares. A missing
 * required argument or one of the wrong type is a {@link BadArgument} naming the argument, which
 * the tool reports to the model as an error result.
 */
final class ToolArguments {
  private final Map<String, Object> values;

  ToolArguments(@Nullable Map<String, Object> values) {
    this.values = values == null ? Map.of() : values;
  }

  /** A tool argument the model got wrong; its message says which and how. */
  static final class BadArgument extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadArgument(String message) {
      super(message, null, false, false);
    }
  }

  /** The non-blank string {@code name}. */
  String requiredString(String name) {
    String value = string(name);
    if (value == null || value.isBlank()) {
      throw new BadArgument("missing required argument '" + name + "' (a non-empty string)");
    }
    return value;
  }

  /** The string {@code name}, or {@code fallback} when it is absent or blank. */
  String string(String name, String fallback) {
    String value = string(name);
    return value == null || value.isBlank() ? fallback : value;
  }

  /** The string {@code name} as given (blank included), or null when absent. */
  @Nullable String string(String name) {
    Object value = values.get(name);
    if (value == null) {
      return null;
    }
    if (value instanceof String text) {
      return text;
    }
    throw new BadArgument("argument '" + name + "' must be a string");
  }

  /** The integer {@code name}, or {@code fallback} when it is absent. */
  int integer(String name, int fallback) {
    Object value = values.get(name);
    if (value == null) {
      return fallback;
    }
    if (value instanceof Number number) {
      double d = number.doubleValue();
      if (d == Math.rint(d) && Math.abs(d) <= Integer.MAX_VALUE) {
        return (int) d;
      }
    }
    throw new BadArgument("argument '" + name + "' must be an integer");
  }

  /** The object of string values {@code name}, or an empty map when it is absent. */
  Map<String, String> stringMap(String name) {
    Object value = values.get(name);
    if (value == null) {
      return Map.of();
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw new BadArgument("argument '" + name + "' must be an object of string values");
    }
    Map<String, String> copy = new LinkedHashMap<>();
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      if (!(entry.getValue() instanceof String text)) {
        throw new BadArgument(
            "argument '" + name + "' must map names to strings; '" + entry.getKey() + "' does not");
      }
      copy.put(String.valueOf(entry.getKey()), text);
    }
    return copy;
  }
}
