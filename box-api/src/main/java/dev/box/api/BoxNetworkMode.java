package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * Whether a sandbox can reach the network: {@code off} gives it a network namespace with only lo.
 */
public enum BoxNetworkMode implements BoxWireEnum {
  OFF,
  ON;

  /**
   * Parses the JSON form, {@code "off"} or {@code "on"}; throws {@link BoxValidationException} on
   * anything else.
   */
  @JsonCreator
  public static BoxNetworkMode fromWire(String value) {
    return WireEnums.parse(BoxNetworkMode.class, "network", value);
  }
}
