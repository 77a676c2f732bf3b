package dev.box.api;

/** A configured capacity (sessions, processes) is reached; retry after freeing some. */
public final class BoxCapacityExceededException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxCapacityExceededException(String message) {
    super(BoxErrorCode.CAPACITY_EXCEEDED, message);
  }
}
