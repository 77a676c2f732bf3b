package dev.box.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.BoxValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one classification of failures, for every way Box answers one (REST, the stdio relay,
 * LangBot's action RPC): the first {@link BoxException} in the cause chain keeps its code; a JSON
 * document that does not map is a {@code validation_error} naming the field; malformed JSON is a
 * {@code validation_error}; anything else is an {@code internal_error}, logged with its stack
 * trace, whose message names only the exception's class. Each transport renders the result in its
 * own shape. Thread-safe.
 */
public final class ErrorClassifier {
  private static final Logger log = LoggerFactory.getLogger(ErrorClassifier.class);

  private final String document;
  private final String serving;

  /**
   * A classifier for one transport.
   *
   * @param document what the JSON being read is called when a failure concerns all of it, for
   *     example {@code "invalid request body"}
   * @param serving what was being served when an unexpected failure is logged, for example {@code
   *     "a request"}
   */
  public ErrorClassifier(String document, String serving) {
    this.document = document;
    this.serving = serving;
  }

  /** The error {@code failure} is answered with. */
  public BoxException classify(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof BoxException box) {
        return box;
      }
    }
    if (failure instanceof JsonMappingException mapping) {
      return new BoxValidationException(BoxJson.describe(mapping, document));
    }
    if (failure instanceof JsonProcessingException json) {
      return new BoxValidationException("malformed JSON: " + json.getOriginalMessage());
    }
    log.error("unexpected failure while serving {}", serving, failure);
    return new BoxException(
        BoxErrorCode.INTERNAL_ERROR, "internal error: " + failure.getClass().getSimpleName());
  }
}
