package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * Whether a sandbox can reach the network: {@code off} gives it a network namespace with only lo.
 */
public enum BoxNetworkMode {
  OFF,
  ON;

  /** The JSON form, {@code "off"} or {@code "on"}. */
  @JsonValue
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Parses the JSON form; throws {@link BoxValidationException} on anything else. */
  @JsonCreator
  public static BoxNetworkMode fromWire(String value) {
    return WireEnums.parse(BoxNetworkMode.class, "network", value);
  }
}
