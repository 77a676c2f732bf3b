package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/sessions/{id}/fork}: the id of the new session, and whether it
 * persists (a fork does not inherit its source's {@code persistent}).
 *
 * @param sessionId the new session's id, validated as a create's
 * @param persistent whether the new session is kept when idle and across restarts
 */
public record BoxForkRequest(String sessionId, boolean persistent) {

  @JsonCreator
  static BoxForkRequest fromJson(
      @JsonProperty("session_id") @Nullable String sessionId,
      @JsonProperty("persistent") @Nullable Boolean persistent) {
    return new BoxForkRequest(
        ModelRules.required("session_id", sessionId), persistent != null && persistent);
  }
}
