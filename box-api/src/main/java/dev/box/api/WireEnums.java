package dev.box.api;

import java.util.Arrays;
import java.util.stream.Collectors;

/** Parsing of the lower-case JSON names of the wire enums, with the message a user sees. */
final class WireEnums {
  private WireEnums() {}

  static <E extends Enum<E> & BoxWireEnum> E parse(Class<E> type, String field, String value) {
    for (E constant : type.getEnumConstants()) {
      if (constant.wireName().equals(value)) {
        return constant;
      }
    }
    String allowed =
        Arrays.stream(type.getEnumConstants())
            .map(BoxWireEnum::wireName)
            .collect(Collectors.joining(", "));
    throw new BoxValidationException(
        field + " must be one of " + allowed + ", not '" + value + "'");
  }
}
