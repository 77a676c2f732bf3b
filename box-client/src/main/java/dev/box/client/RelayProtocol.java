package dev.box.client;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import org.jspecify.annotations.Nullable;

/**
 * The server's side of the stdio relay in raw mode, as docs/ describe it: the start frame and the
 * close codes and reasons.
 */
final class RelayProtocol {
  /** Stdout ended; the reason is {@code exit_code=N}, or {@code stdout closed}. */
  static final int NORMAL_CLOSURE = 1000;

  /** The JDK reports a connection that ended without a close frame with this code. */
  static final int ABNORMAL_CLOSURE = 1006;

  /** The requested offset is no longer buffered; the reason names the first available one. */
  static final int OFFSET_GONE = 4410;

  private static final ObjectMapper MAPPER = BoxJson.newMapper();
  private static final String EXIT_CODE = "exit_code=";
  private static final String FIRST_AVAILABLE = "first_available=";

  private RelayProtocol() {}

  /** The offset of a {@code {"type":"start","offset":N}} frame, or null for any other text. */
  static @Nullable Long startOffset(String text) {
    try {
      JsonNode node = MAPPER.readTree(text);
      if (node != null
          && node.path("type").asText("").equals("start")
          && node.path("offset").canConvertToLong()
          && node.path("offset").isIntegralNumber()) {
        return node.path("offset").asLong();
      }
    } catch (JacksonException e) {
      // Not a control frame.
    }
    return null;
  }

  /** The exit code a normal close reason carries, or null when it carries none. */
  static @Nullable Integer exitCode(String reason) {
    if (!reason.startsWith(EXIT_CODE)) {
      return null;
    }
    try {
      return Integer.valueOf(reason.substring(EXIT_CODE.length()).strip());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The first available offset an offset-gone reason names, or null when it names none. */
  static @Nullable Long firstAvailable(String reason) {
    int at = reason.indexOf(FIRST_AVAILABLE);
    if (at < 0) {
      return null;
    }
    try {
      return Long.valueOf(reason.substring(at + FIRST_AVAILABLE.length()).strip());
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
