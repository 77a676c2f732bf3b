package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * How an exec ended: it ran to completion (any exit code), or it hit its timeout and was killed.
 */
public enum BoxExecutionStatus implements BoxWireEnum {
  COMPLETED,
  TIMED_OUT;

  /**
   * Parses the JSON form, {@code "completed"} or {@code "timed_out"}; throws {@link
   * BoxValidationException} on anything else.
   */
  @JsonCreator
  public static BoxExecutionStatus fromWire(String value) {
    return WireEnums.parse(BoxExecutionStatus.class, "status", value);
  }
}
