package dev.box.api;

/**
 * The stable error codes of the Box API, each with the HTTP status the server answers with.
 *
 * <p>The code travels in every error body ({@code {"error": {"code": ..., "message": ...}}}); the
 * client maps it back to the matching {@link BoxException} subtype. On the wire a code is its name
 * in lower case, for example {@code session_not_found}.
 */
public enum BoxErrorCode implements BoxWireEnum {
  VALIDATION_ERROR(400),
  UNAUTHORIZED(401),
  NOT_FOUND(404),
  METHOD_NOT_ALLOWED(405),
  SESSION_NOT_FOUND(404),
  MANAGED_PROCESS_NOT_FOUND(404),
  SESSION_CONFLICT(409),
  MANAGED_PROCESS_CONFLICT(409),
  /** The stdout offset a relay client asked for is no longer buffered. */
  OFFSET_GONE(410),
  PAYLOAD_TOO_LARGE(413),
  CAPACITY_EXCEEDED(429),
  /** No file or directory at a path of a files route, as the sandbox sees it. */
  FILE_NOT_FOUND(404),
  /**
   * A path of a files route is of the wrong type: a directory where a file is needed, a file where
   * a directory is needed, or neither (a device, a FIFO).
   */
  FILE_TYPE_CONFLICT(409),
  /** A files route tried to change a read-only mount or a read-only root filesystem. */
  READ_ONLY(409),
  /** The sandbox user may not read or change a path of a files route. */
  PERMISSION_DENIED(403),
  /** A write of a files route hit a full disk or the workspace quota. */
  STORAGE_FULL(507),
  INTERNAL_ERROR(500),
  BACKEND_UNAVAILABLE(503),
  RUNTIME_UNAVAILABLE(503);

  private final int httpStatus;

  BoxErrorCode(int httpStatus) {
    this.httpStatus = httpStatus;
  }

  /** The HTTP status the server answers with for this code. */
  public int httpStatus() {
    return httpStatus;
  }

  /**
   * The code that best describes an HTTP error status when the answer carries no Box error body (a
   * proxy's answer, or the HTTP layer's own).
   */
  public static BoxErrorCode forHttpStatus(int status) {
    return switch (status) {
      case 400 -> VALIDATION_ERROR;
      case 401, 403 -> UNAUTHORIZED;
      case 404 -> NOT_FOUND;
      case 405 -> METHOD_NOT_ALLOWED;
      case 413 -> PAYLOAD_TOO_LARGE;
      case 429 -> CAPACITY_EXCEEDED;
      case 502, 503, 504 -> RUNTIME_UNAVAILABLE;
      default -> status >= 500 ? INTERNAL_ERROR : VALIDATION_ERROR;
    };
  }

  /**
   * The code with this wire name, or {@link #INTERNAL_ERROR} for a name this version does not know.
   */
  public static BoxErrorCode fromWire(String wireName) {
    for (BoxErrorCode code : values()) {
      if (code.wireName().equals(wireName)) {
        return code;
      }
    }
    return INTERNAL_ERROR;
  }
}
