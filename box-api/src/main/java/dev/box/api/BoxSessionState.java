package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * Whether a session's processes run: {@code paused} sessions keep their memory and use no CPU until
 * they are resumed (explicitly, or by the next exec, files call, process start or attach).
 */
public enum BoxSessionState implements BoxWireEnum {
  RUNNING,
  PAUSED;

  /**
   * Parses the JSON form, {@code "running"} or {@code "paused"}; throws {@link
   * BoxValidationException} on anything else.
   */
  @JsonCreator
  public static BoxSessionState fromWire(String value) {
    return WireEnums.parse(BoxSessionState.class, "state", value);
  }
}
