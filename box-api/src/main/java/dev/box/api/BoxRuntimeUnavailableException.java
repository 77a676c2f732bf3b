package dev.box.api;

/**
 * The runtime cannot serve the request now, for example while it shuts down or when it cannot be
 * reached.
 */
public final class BoxRuntimeUnavailableException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxRuntimeUnavailableException(String message) {
    super(BoxErrorCode.RUNTIME_UNAVAILABLE, message);
  }

  /** Creates the error with the message the user sees and the failure behind it. */
  public BoxRuntimeUnavailableException(String message, Throwable cause) {
    super(BoxErrorCode.RUNTIME_UNAVAILABLE, message, cause);
  }
}
