package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** How a host directory is mounted: not at all, read-only or read-write. */
public enum BoxHostMountMode {
  NONE,
  RO,
  RW;

  /** The JSON form, {@code "none"}, {@code "ro"} or {@code "rw"}. */
  @JsonValue
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Parses the JSON form; throws {@link BoxValidationException} on anything else. */
  @JsonCreator
  public static BoxHostMountMode fromWire(String value) {
    return WireEnums.parse(BoxHostMountMode.class, "host_path_mode", value);
  }
}
