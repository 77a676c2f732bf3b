package dev.box.api;

/** The managed process exists but is not running, so it cannot be attached to. */
public final class BoxManagedProcessConflictException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxManagedProcessConflictException(String message) {
    super(BoxErrorCode.MANAGED_PROCESS_CONFLICT, message);
  }
}
