package dev.box.e2b.server;

/**
 * A failed Connect call of envd, answered as Connect's error JSON {@code
 * {"code":"not_found","message":...}} with the HTTP status Connect's protocol gives its code; E2B's
 * SDK maps the code to its error classes ({@code not_found} to {@code FileNotFoundError}).
 */
final class ConnectError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String code;
  private final int status;

  ConnectError(String code, String message) {
    this(code, message, statusOf(code));
  }

  private ConnectError(String code, String message, int status) {
    super(message, null, false, false);
    this.code = code;
    this.status = status;
  }

  /**
   * The refusal of a request to a sandbox that does not exist (any more): {@code unavailable} with
   * 502, as E2B's proxy answers, which the SDK reads as "the sandbox is gone".
   */
  static ConnectError sandboxGone(String message) {
    return new ConnectError("unavailable", message, 502);
  }

  /** The refusal of a request in a codec that is not served: 415, as Connect's protocol says. */
  static ConnectError unsupportedMediaType(String message) {
    return new ConnectError("unimplemented", message, 415);
  }

  /** The Connect error for an E2B-shaped refusal of {@code status}. */
  static ConnectError ofStatus(int status, String message) {
    return switch (status) {
      case 401 -> new ConnectError("unauthenticated", message);
      case 403 -> new ConnectError("permission_denied", message);
      case 404 -> notFound(message);
      case 501 -> new ConnectError("unimplemented", message);
      case 502 -> sandboxGone(message);
      default -> invalidArgument(message);
    };
  }

  /** Connect's code, as {@code invalid_argument}. */
  String code() {
    return code;
  }

  /** The HTTP status of a unary answer with this error. */
  int httpStatus() {
    return status;
  }

  /** The HTTP status Connect's protocol gives {@code code}. */
  private static int statusOf(String code) {
    return switch (code) {
      case "invalid_argument", "failed_precondition", "out_of_range" -> 400;
      case "unauthenticated" -> 401;
      case "permission_denied" -> 403;
      case "not_found" -> 404;
      case "already_exists", "aborted" -> 409;
      case "resource_exhausted" -> 429;
      case "canceled" -> 499;
      case "unimplemented" -> 501;
      case "unavailable" -> 503;
      case "deadline_exceeded" -> 504;
      default -> 500;
    };
  }

  static ConnectError invalidArgument(String message) {
    return new ConnectError("invalid_argument", message);
  }

  static ConnectError notFound(String message) {
    return new ConnectError("not_found", message);
  }

  /** The reason, never null. */
  @Override
  public String getMessage() {
    return String.valueOf(super.getMessage());
  }
}
