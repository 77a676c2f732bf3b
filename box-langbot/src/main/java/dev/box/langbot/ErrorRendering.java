package dev.box.langbot;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.ErrorClassifier;

/**
 * The one place where failures become the {@code message} of an error response: {@code
 * "<ExceptionClass>: <text>"} with the reference runtime's class names, truncated as the reference
 * does. Which error a failure is, {@link ErrorClassifier} decides, as it does for REST.
 */
public final class ErrorRendering {
  /** The reference's base class, for errors it has no narrower class for. */
  static final String GENERIC = "BoxError";

  /** Longest rendered message before truncation. */
  static final int MAX_MESSAGE_CHARS = 4096;

  static final String TRUNCATED_SUFFIX = "... [protocol error truncated]";

  private static final ErrorClassifier CLASSIFIER =
      new ErrorClassifier("invalid data", "an action");

  private ErrorRendering() {}

  /** The error text of {@code failure}, for example {@code "BoxSessionNotFoundError: ..."}. */
  public static String render(Throwable failure) {
    BoxException error = CLASSIFIER.classify(failure);
    String text = className(error) + ": " + error.getMessage();
    return text.length() > MAX_MESSAGE_CHARS
        ? text.substring(0, MAX_MESSAGE_CHARS) + TRUNCATED_SUFFIX
        : text;
  }

  /**
   * The reference's exception class name for {@code error}: an action error's own, else its code's.
   */
  public static String className(BoxException error) {
    return error instanceof ActionError action ? action.className() : className(error.code());
  }

  /** The reference's exception class name for a Box error code. */
  public static String className(BoxErrorCode code) {
    return switch (code) {
      case VALIDATION_ERROR, PAYLOAD_TOO_LARGE -> "BoxValidationError";
      case SESSION_NOT_FOUND -> "BoxSessionNotFoundError";
      case SESSION_CONFLICT -> "BoxSessionConflictError";
      case CAPACITY_EXCEEDED -> "BoxCapacityExceededError";
      case BACKEND_UNAVAILABLE -> "BoxBackendUnavailableError";
      case RUNTIME_UNAVAILABLE -> "BoxRuntimeUnavailableError";
      case MANAGED_PROCESS_NOT_FOUND -> "BoxManagedProcessNotFoundError";
      case MANAGED_PROCESS_CONFLICT -> "BoxManagedProcessConflictError";
      case UNAUTHORIZED -> "PermissionError";
      case NOT_FOUND,
          METHOD_NOT_ALLOWED,
          OFFSET_GONE,
          FILE_NOT_FOUND,
          FILE_TYPE_CONFLICT,
          READ_ONLY,
          PERMISSION_DENIED,
          STORAGE_FULL,
          INTERNAL_ERROR ->
          GENERIC;
    };
  }
}
