package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * How an exec ended: it ran to completion (any exit code), or it hit its timeout and was killed.
 */
public enum BoxExecutionStatus {
  COMPLETED,
  TIMED_OUT;

  /** The JSON form, {@code "completed"} or {@code "timed_out"}. */
  @JsonValue
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Parses the JSON form; throws {@link BoxValidationException} on anything else. */
  @JsonCreator
  public static BoxExecutionStatus fromWire(String value) {
    return WireEnums.parse(BoxExecutionStatus.class, "status", value);
  }
}
