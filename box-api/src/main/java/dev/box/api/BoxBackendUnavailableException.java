package dev.box.api;

/** No sandbox backend is available to run the request. */
public final class BoxBackendUnavailableException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxBackendUnavailableException(String message) {
    super(BoxErrorCode.BACKEND_UNAVAILABLE, message);
  }
}
