package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;

/** How a host directory is mounted: not at all, read-only or read-write. */
public enum BoxHostMountMode implements BoxWireEnum {
  NONE,
  RO,
  RW;

  /**
   * Parses the JSON form, {@code "none"}, {@code "ro"} or {@code "rw"}; throws {@link
   * BoxValidationException} on anything else.
   */
  @JsonCreator
  public static BoxHostMountMode fromWire(String value) {
    return WireEnums.parse(BoxHostMountMode.class, "host_path_mode", value);
  }
}
