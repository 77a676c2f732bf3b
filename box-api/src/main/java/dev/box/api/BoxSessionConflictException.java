package dev.box.api;

/** A session with this id exists with a different value of a compared field. */
public final class BoxSessionConflictException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxSessionConflictException(String message) {
    super(BoxErrorCode.SESSION_CONFLICT, message);
  }
}
