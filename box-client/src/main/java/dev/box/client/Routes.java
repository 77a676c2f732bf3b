package dev.box.client;

import dev.box.api.BoxSnapshot;
import dev.box.api.BoxValidationException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** The routes of the server's API, checked and encoded before anything is sent. */
final class Routes {
  /** The route of every snapshot. */
  static final String SNAPSHOTS = "/v1/snapshots";

  private Routes() {}

  /**
   * The route of the session {@code sessionId}.
   *
   * @throws BoxValidationException when {@code sessionId} is blank
   */
  static String session(String sessionId) {
    String id = sessionId.strip();
    if (id.isEmpty()) {
      throw new BoxValidationException("session_id must not be empty");
    }
    return "/v1/sessions/" + encodePathSegment(id);
  }

  /**
   * The route of the managed process {@code processId} of {@code sessionId}.
   *
   * @throws BoxValidationException when an id is blank
   */
  static String process(String sessionId, String processId) {
    String id = processId.strip();
    if (id.isEmpty()) {
      throw new BoxValidationException("process_id must not be empty");
    }
    return session(sessionId) + "/managed-process/" + encodePathSegment(id);
  }

  /**
   * The route that opens a terminal of {@code cols} by {@code rows} in {@code sessionId}.
   *
   * @throws BoxValidationException when {@code sessionId} is blank
   */
  static String terminal(String sessionId, int cols, int rows) {
    return session(sessionId) + "/terminal?cols=" + cols + "&rows=" + rows;
  }

  /**
   * The route of the snapshot {@code name}.
   *
   * @throws BoxValidationException when {@code name} is not a snapshot name
   */
  static String snapshot(String name) {
    return SNAPSHOTS + "/" + BoxSnapshot.checkName("name", name);
  }

  private static String encodePathSegment(String segment) {
    // URLEncoder encodes for forms, where a space is '+'; in a path '+' is a literal plus.
    return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
