package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import dev.box.api.BoxError;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.BoxValidationException;
import io.javalin.http.HttpResponseException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where failures become HTTP answers: a {@link BoxException} keeps its code, a
 * malformed or mistyped request body is a {@code validation_error}, and anything unexpected is a
 * logged {@code internal_error} whose answer carries no stack trace.
 */
final class ErrorMapper {
  private static final Logger log = LoggerFactory.getLogger(ErrorMapper.class);

  private ErrorMapper() {}

  static BoxException toBoxException(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof BoxException box) {
        return box;
      }
    }
    if (failure instanceof JsonMappingException mapping) {
      return new BoxValidationException(BoxJson.describe(mapping, "invalid request body"));
    }
    if (failure instanceof JsonProcessingException json) {
      return new BoxValidationException("malformed JSON: " + json.getOriginalMessage());
    }
    if (failure instanceof HttpResponseException http) {
      return new BoxException(
          BoxErrorCode.forHttpStatus(http.getStatus()), String.valueOf(http.getMessage()));
    }
    log.error("unexpected failure while serving a request", failure);
    return new BoxException(
        BoxErrorCode.INTERNAL_ERROR, "internal error: " + failure.getClass().getSimpleName());
  }

  static BoxError body(BoxException e) {
    return BoxError.of(e);
  }
}
