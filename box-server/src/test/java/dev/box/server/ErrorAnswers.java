package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp.Bytes;
import org.assertj.core.api.AbstractStringAssert;

/**
 * Assertions on the JSON error answers of the API: the HTTP status and the error code a client
 * branches on, checked together, and the message left to the caller.
 */
final class ErrorAnswers {
  private ErrorAnswers() {}

  /**
   * Asserts that {@code answer} is an error with this status and code; returns an assertion on its
   * message.
   */
  static AbstractStringAssert<?> assertError(Answer answer, int status, String code) {
    assertThat(answer.status()).as("%s", answer).isEqualTo(status);
    assertThat(answer.errorCode()).as("%s", answer).isEqualTo(code);
    return assertThat(answer.errorMessage());
  }

  /** The same for an answer read as bytes (the files routes). */
  static AbstractStringAssert<?> assertError(Bytes answer, int status, String code) {
    assertThat(answer.status()).isEqualTo(status);
    assertThat(answer.errorCode()).isEqualTo(code);
    return assertThat(answer.json().path("error").path("message").asText());
  }
}
