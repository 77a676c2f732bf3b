package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** Whether a managed process still runs. */
public enum BoxManagedProcessStatus {
  RUNNING,
  EXITED;

  /** The JSON form, {@code "running"} or {@code "exited"}. */
  @JsonValue
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Parses the JSON form; throws {@link BoxValidationException} on anything else. */
  @JsonCreator
  public static BoxManagedProcessStatus fromWire(String value) {
    return WireEnums.parse(BoxManagedProcessStatus.class, "status", value);
  }
}
