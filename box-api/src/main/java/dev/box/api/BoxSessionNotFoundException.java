package dev.box.api;

/** The named session does not exist (or no longer does). */
public final class BoxSessionNotFoundException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxSessionNotFoundException(String message) {
    super(BoxErrorCode.SESSION_NOT_FOUND, message);
  }
}
