package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;

/**
 * What an entry of a directory listing is, as the sandbox sees it (symbolic links not followed).
 */
public enum BoxFileType implements BoxWireEnum {
  FILE,
  DIR,
  SYMLINK,
  /** A FIFO, a socket or a device node. */
  OTHER;

  /**
   * Parses the JSON form, {@code "file"}, {@code "dir"}, {@code "symlink"} or {@code "other"};
   * throws {@link BoxValidationException} on anything else.
   */
  @JsonCreator
  public static BoxFileType fromWire(String value) {
    return WireEnums.parse(BoxFileType.class, "type", value);
  }
}
