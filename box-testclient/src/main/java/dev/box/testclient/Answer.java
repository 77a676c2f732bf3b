package dev.box.testclient;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An HTTP answer: its status and its body parsed as JSON (an empty object when there is none).
 *
 * @param status the HTTP status code
 * @param body the body as JSON
 */
public record Answer(int status, JsonNode body) {
  /** The top-level {@code field} as text, empty when it is absent. */
  public String text(String field) {
    return body.path(field).asText();
  }

  /** An exec result's {@code stdout}. */
  public String stdout() {
    return text("stdout");
  }

  /** An exec result's {@code stderr}. */
  public String stderr() {
    return text("stderr");
  }

  /** The body's {@code ok} flag. */
  public boolean ok() {
    return body.path("ok").asBoolean();
  }

  /** An error answer's stable code, empty for a success. */
  public String errorCode() {
    return body.path("error").path("code").asText();
  }

  /** An error answer's message, empty for a success. */
  public String errorMessage() {
    return body.path("error").path("message").asText();
  }
}
