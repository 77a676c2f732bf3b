package dev.box.langbot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where failures become the {@code message} of an error response: {@code
 * "<ExceptionClass>: <text>"} with the reference runtime's class names, truncated as the reference
 * does.
 */
public final class ErrorRendering {
  private static final Logger log = LoggerFactory.getLogger(ErrorRendering.class);

  /** Longest rendered message before truncation. */
  static final int MAX_MESSAGE_CHARS = 4096;

  static final String TRUNCATED_SUFFIX = "... [protocol error truncated]";

  private ErrorRendering() {}

  /** The error text of {@code failure}, for example {@code "BoxSessionNotFoundError: ..."}. */
  public static String render(Throwable failure) {
    String text = classify(failure);
    return text.length() > MAX_MESSAGE_CHARS
        ? text.substring(0, MAX_MESSAGE_CHARS) + TRUNCATED_SUFFIX
        : text;
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
      case NOT_FOUND, METHOD_NOT_ALLOWED, INTERNAL_ERROR -> "BoxError";
    };
  }

  private static String classify(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ActionError action) {
        return action.className() + ": " + action.getMessage();
      }
      if (t instanceof BoxException box) {
        return className(box.code()) + ": " + box.getMessage();
      }
    }
    if (failure instanceof JsonMappingException mapping) {
      return "BoxValidationError: " + BoxJson.describe(mapping, "invalid data");
    }
    if (failure instanceof JsonProcessingException json) {
      return "BoxValidationError: malformed JSON: " + json.getOriginalMessage();
    }
    log.error("unexpected failure while serving an action", failure);
    return "BoxError: internal error: " + failure.getClass().getSimpleName();
  }
}
