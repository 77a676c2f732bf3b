package dev.box.backend.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.Base64;
import org.jspecify.annotations.Nullable;

/** One event of envd's {@code process.Process/Start} stream ({@code ProcessEvent} in the proto). */
sealed interface ProcessEvent {
  /** The process started with {@code pid}. */
  record Started(int pid) implements ProcessEvent {}

  /** Output on stdout ({@code stderr} false) or stderr. */
  record Output(boolean stderr, byte[] bytes) implements ProcessEvent {}

  /**
   * The process ended.
   *
   * @param exitCode its exit code, or 128+N when a signal N killed it
   */
  record Ended(int exitCode) implements ProcessEvent {}

  /** A keep-alive, or an event this version does not know. */
  record Other() implements ProcessEvent {}

  /**
   * Parses {@code StartResponse} in Connect's JSON mapping: {@code {"event":{"start":{"pid":1}}}},
   * {@code {"event":{"data":{"stdout":"<base64>"}}}}, {@code {"event":{"end":{"exitCode":0,
   * "exited":true,"status":"exit status 0"}}}}.
   */
  static ProcessEvent parse(JsonNode message) throws IOException {
    JsonNode event = message.path("event");
    if (event.has("start")) {
      return new Started(event.path("start").path("pid").asInt(0));
    }
    if (event.has("data")) {
      JsonNode data = event.path("data");
      boolean stderr = data.has("stderr");
      String text = data.path(stderr ? "stderr" : "stdout").asText("");
      try {
        return new Output(stderr, Base64.getDecoder().decode(text));
      } catch (IllegalArgumentException e) {
        throw new IOException("output that is not base64");
      }
    }
    if (event.has("end")) {
      JsonNode end = event.path("end");
      return new Ended(exitCode(end.path("exitCode").asInt(0), end.path("status").asText("")));
    }
    return new Other();
  }

  /**
   * The exit code as Box reports it. envd reports a process killed by a signal with exit code -1
   * and a status such as {@code signal: killed} (Go's text of the wait status).
   */
  private static int exitCode(int code, @Nullable String status) {
    if (code >= 0 || status == null || !status.startsWith("signal: ")) {
      return code < 0 ? 255 : code;
    }
    return switch (status.substring("signal: ".length())) {
      case "killed" -> 128 + 9;
      case "terminated" -> 128 + 15;
      case "interrupt" -> 128 + 2;
      case "hangup" -> 128 + 1;
      case "aborted" -> 128 + 6;
      case "segmentation fault" -> 128 + 11;
      default -> 255;
    };
  }
}
