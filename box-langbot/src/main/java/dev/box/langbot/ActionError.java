package dev.box.langbot;

/**
 * An action failure with the Python exception class name LangBot's client maps it back by, for
 * example {@code PermissionError} or {@code KeyError}; it travels as {@code "<className>:
 * <message>"}.
 */
public final class ActionError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String className;

  /** An error rendered as {@code "<className>: <message>"}. */
  public ActionError(String className, String message) {
    super(message);
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
}
