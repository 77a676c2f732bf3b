package dev.box.e2b.server;

/**
 * A refusal of the control plane or of envd's REST routes, answered as E2B's {@code Error} body
 * {@code {"code":<status>,"message":...}}: E2B's SDKs read the body's {@code code}, not the HTTP
 * status, to tell a missing sandbox from other failures.
 */
final class ApiError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int status;

  ApiError(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  /** The HTTP status, also the body's {@code code}. */
  int status() {
    return status;
  }

  static ApiError badRequest(String message) {
    return new ApiError(400, message);
  }

  static ApiError notFound(String message) {
    return new ApiError(404, message);
  }

  /** What Box does not serve (yet), with its reason. */
  static ApiError notSupported(String what) {
    return new ApiError(501, what + " is not supported by Box yet");
  }

  /** The reason, never null. */
  @Override
  public String getMessage() {
    return String.valueOf(super.getMessage());
  }
}
