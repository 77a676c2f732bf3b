package dev.box.api;

/** The named managed process does not exist in the session (or its record expired). */
public final class BoxManagedProcessNotFoundException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxManagedProcessNotFoundException(String message) {
    super(BoxErrorCode.MANAGED_PROCESS_NOT_FOUND, message);
  }
}
