package dev.box.langbot;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;

/**
 * An action failure with the Python exception class name LangBot's client maps it back by, for
 * example {@code PermissionError} or {@code KeyError}; it travels as {@code "<className>:
 * <message>"}. Its {@linkplain #code() code} is the Box error it stands for.
 */
public final class ActionError extends BoxException {
  private static final long serialVersionUID = 1L;

  private final String className;

  /**
   * An error rendered as {@code "<className>: <message>"}, with the code of the Box error of that
   * class name ({@code internal_error} for {@code BoxError} and names Box has no error for).
   */
  public ActionError(String className, String message) {
    this(codeOf(className), className, message);
  }

  /** An error rendered as {@code "<className>: <message>"} that stands for {@code code}. */
  public ActionError(BoxErrorCode code, String className, String message) {
    super(code, message);
    this.className = className;
  }

  /** The reference runtime's exception class name. */
  public String className() {
    return className;
  }

  /** The error for a tenant action whose context is stale, missing or foreign. */
  static ActionError permission(String message) {
    return new ActionError("PermissionError", message);
  }

  /** The error for a missing request key, as Python's {@code KeyError} renders it. */
  static ActionError missingKey(String key) {
    return new ActionError("KeyError", "'" + key + "'");
  }

  private static BoxErrorCode codeOf(String className) {
    if (className.equals("KeyError")) {
      return BoxErrorCode.VALIDATION_ERROR;
    }
    for (BoxErrorCode code : BoxErrorCode.values()) {
      String name = ErrorRendering.className(code);
      if (name.equals(className) && !name.equals(ErrorRendering.GENERIC)) {
        return code;
      }
    }
    return BoxErrorCode.INTERNAL_ERROR;
  }
}
