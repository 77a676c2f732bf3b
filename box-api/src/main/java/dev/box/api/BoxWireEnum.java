package dev.box.api;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * An enum of the wire model whose JSON form is the name of its constant in lower case, as {@code
 * "timed_out"} for {@code TIMED_OUT}; the one place that spelling is decided.
 */
public sealed interface BoxWireEnum
    permits BoxErrorCode,
        BoxExecutionStatus,
        BoxFileType,
        BoxHostMountMode,
        BoxManagedProcessStatus,
        BoxNetworkMode,
        BoxSessionState {

  /** The name of the constant, as {@link Enum#name()} gives it. */
  String name();

  /** The JSON form: the name of the constant in lower case. */
  @JsonValue
  default String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
