package dev.box.api;

/**
 * The JSON body of every error answer: {@code {"error": {"code": "...", "message": "..."}}}.
 *
 * @param error the code and message
 */
public record BoxError(Detail error) {

  /**
   * The code and message of an error.
   *
   * @param code the stable code, for example {@code session_not_found}
   * @param message what went wrong, for the user
   */
  public record Detail(String code, String message) {}

  /** The body for {@code exception}. */
  public static BoxError of(BoxException exception) {
    return new BoxError(
        new Detail(exception.code().wireName(), String.valueOf(exception.getMessage())));
  }

  /** Turns this body back into the exception the server raised. */
  public BoxException toException() {
    return BoxException.of(BoxErrorCode.fromWire(error.code()), error.message());
  }
}
