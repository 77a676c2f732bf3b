package dev.box.core.settings;

import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * An integer setting: its key, default and inclusive range, and the messages a user sees when a
 * value is not one of it.
 *
 * @param key the name of the setting in a config file, a flag or a {@code box.limits} section
 * @param defaultValue the value when none is given
 * @param min the smallest value allowed
 * @param max the largest value allowed
 */
public record IntSetting(String key, int defaultValue, int min, int max) {

  /** Checks that the default lies in the range. */
  public IntSetting {
    if (min > max || defaultValue < min || defaultValue > max) {
      throw new IllegalArgumentException(
          key + ": the default " + defaultValue + " is outside " + min + ".." + max);
    }
  }

  /**
   * Reads the setting from text, as a flag, a {@code BOX_*} variable or a config file gives it.
   *
   * @param text a decimal integer, surrounding whitespace ignored; null or blank for the default
   * @throws IllegalArgumentException {@code "<key> must be an integer, not '<text>'"} or {@code
   *     "<key> must be between <min> and <max>"}
   */
  public int parse(@Nullable String text) {
    if (text == null || text.isBlank()) {
      return defaultValue;
    }
    int value;
    try {
      value = Integer.parseInt(text.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(notAnInteger(key) + ", not '" + text + "'");
    }
    if (!allows(value)) {
      throw new IllegalArgumentException(outOfRange(key));
    }
    return value;
  }

  /**
   * Reads the setting from {@code values} by its key, as {@link #parse} reads text.
   *
   * @param values settings by key, as flags, variables and a config file give them
   */
  public int read(Map<String, String> values) {
    return parse(values.get(key));
  }

  /** Whether {@code value} lies in the range. */
  public boolean allows(long value) {
    return value >= min && value <= max;
  }

  /**
   * {@code "<name> must be an integer"}.
   *
   * @param name what the user calls the setting: its key, or its path in a section ({@code
   *     box.limits.max_sessions})
   */
  public String notAnInteger(String name) {
    return name + " must be an integer";
  }

  /**
   * {@code "<name> must be between <min> and <max>"}.
   *
   * @param name what the user calls the setting: its key, or its path in a section
   */
  public String outOfRange(String name) {
    return name + " must be between " + min + " and " + max;
  }
}
