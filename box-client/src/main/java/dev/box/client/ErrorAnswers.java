package dev.box.client;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxError;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.BoxRuntimeUnavailableException;
import java.net.URI;
import org.jspecify.annotations.Nullable;

/**
 * Turns failed exchanges into {@link BoxException}s: a Box error body into the subtype the server
 * raised, any other error answer into the code its HTTP status suggests, and a transport failure
 * into {@link BoxRuntimeUnavailableException}.
 */
final class ErrorAnswers {
  private static final ObjectMapper MAPPER = BoxJson.newMapper();
  private static final int MAX_QUOTED_BODY = 200;

  private ErrorAnswers() {}

  static BoxException toException(int status, String body, String method, URI uri) {
    BoxError error = parse(body);
    if (error != null) {
      return error.toException();
    }
    String detail =
        body.isBlank()
            ? "an empty body"
            : "a body that is not a Box error: " + quote(body.strip().replaceAll("\\s+", " "));
    return BoxException.of(
        BoxErrorCode.forHttpStatus(status),
        "HTTP " + status + " to " + method + " " + uri + " with " + detail);
  }

  static BoxRuntimeUnavailableException unavailable(Exception cause) {
    return new BoxRuntimeUnavailableException("box runtime unavailable: " + describe(cause), cause);
  }

  private static @Nullable BoxError parse(String body) {
    JsonNode detail;
    try {
      detail = MAPPER.readTree(body).path("error");
    } catch (JacksonException e) {
      return null;
    }
    JsonNode code = detail.path("code");
    JsonNode message = detail.path("message");
    if (!code.isTextual() || !message.isTextual()) {
      return null;
    }
    return new BoxError(new BoxError.Detail(code.asText(), message.asText()));
  }

  private static String quote(String body) {
    return body.length() <= MAX_QUOTED_BODY ? body : body.substring(0, MAX_QUOTED_BODY) + "...";
  }

  /**
   * The failure, and when it says nothing itself (the JDK's bare ConnectException) the first cause
   * that does.
   */
  private static String describe(Throwable failure) {
    if (failure.getMessage() != null) {
      return failure.toString();
    }
    for (Throwable t = failure.getCause(); t != null && t != failure; t = t.getCause()) {
      if (t.getMessage() != null) {
        return failure + " (" + t + ")";
      }
    }
    return failure.toString();
  }
}
