package dev.box.api;

/** A request that is malformed or breaks a rule of the model; never retried as is. */
public final class BoxValidationException extends BoxException {
  private static final long serialVersionUID = 1L;

  /** Creates the error with the message the user sees. */
  public BoxValidationException(String message) {
    super(BoxErrorCode.VALIDATION_ERROR, message);
  }
}
