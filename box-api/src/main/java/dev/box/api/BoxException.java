package dev.box.api;

/**
 * The root of every error Box reports: a stable {@link BoxErrorCode} plus a message meant for the
 * user.
 *
 * <p>The server renders any {@code BoxException} as {@code {"error": {"code", "message"}}} with the
 * code's HTTP status; {@link #of} turns such a body back into the same subtype on the client side.
 */
public class BoxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final BoxErrorCode code;

  /** An error with an explicit code; prefer the subtypes, which fix the code. */
  public BoxException(BoxErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  /** An error with an explicit code and the failure that caused it. */
  public BoxException(BoxErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /** The stable code of this error. */
  public BoxErrorCode code() {
    return code;
  }

  /** Rebuilds the exception type that matches {@code code}, as the server would have thrown it. */
  public static BoxException of(BoxErrorCode code, String message) {
    return switch (code) {
      case VALIDATION_ERROR -> new BoxValidationException(message);
      case SESSION_NOT_FOUND -> new BoxSessionNotFoundException(message);
      case SESSION_CONFLICT -> new BoxSessionConflictException(message);
      case CAPACITY_EXCEEDED -> new BoxCapacityExceededException(message);
      case BACKEND_UNAVAILABLE -> new BoxBackendUnavailableException(message);
      case RUNTIME_UNAVAILABLE -> new BoxRuntimeUnavailableException(message);
      case MANAGED_PROCESS_NOT_FOUND -> new BoxManagedProcessNotFoundException(message);
      case MANAGED_PROCESS_CONFLICT -> new BoxManagedProcessConflictException(message);
      case UNAUTHORIZED,
          NOT_FOUND,
          METHOD_NOT_ALLOWED,
          OFFSET_GONE,
          PAYLOAD_TOO_LARGE,
          FILE_NOT_FOUND,
          FILE_TYPE_CONFLICT,
          READ_ONLY,
          PERMISSION_DENIED,
          STORAGE_FULL,
          INTERNAL_ERROR ->
          new BoxException(code, message);
    };
  }
}
