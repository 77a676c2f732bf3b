package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;

/** Whether a managed process still runs. */
public enum BoxManagedProcessStatus implements BoxWireEnum {
  RUNNING,
  EXITED;

  /**
   * Parses the JSON form, {@code "running"} or {@code "exited"}; throws {@link
   * BoxValidationException} on anything else.
   */
  @JsonCreator
  public static BoxManagedProcessStatus fromWire(String value) {
    return WireEnums.parse(BoxManagedProcessStatus.class, "status", value);
  }
}
