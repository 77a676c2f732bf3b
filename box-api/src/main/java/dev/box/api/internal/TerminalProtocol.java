package dev.box.api.internal;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import org.jspecify.annotations.Nullable;

/**
 * The terminal WebSocket's text frames ({@code GET /v1/sessions/{id}/terminal}), written and read
 * by the server and the client: binary frames are the terminal's bytes both ways; the client's text
 * frame {@code {"type":"resize","cols":N,"rows":M}} resizes the terminal; the server's last text
 * frame {@code {"type":"exit","exit_code":N}} comes before its normal close.
 */
public final class TerminalProtocol {
  /** The server's close once the terminal's process has exited and its output is all sent. */
  public static final int NORMAL_CLOSURE = 1000;

  /** The server's close for a text frame that is not a valid resize frame. */
  public static final int POLICY_VIOLATION = 1008;

  /** The size of a terminal when the request names none. */
  public static final int DEFAULT_COLS = 80;

  /** The size of a terminal when the request names none. */
  public static final int DEFAULT_ROWS = 24;

  private static final ObjectMapper MAPPER = BoxJson.newMapper();

  private TerminalProtocol() {}

  /**
   * A terminal's size, in characters, as a resize frame carries it (checked by whoever applies it).
   *
   * @param cols its width
   * @param rows its height
   */
  public record Size(int cols, int rows) {}

  /** The client's frame that resizes the terminal. */
  public static String resizeFrame(Size size) {
    return "{\"type\":\"resize\",\"cols\":" + size.cols() + ",\"rows\":" + size.rows() + "}";
  }

  /**
   * The size a resize frame asks for.
   *
   * @throws IllegalArgumentException when {@code text} is not a resize frame, with what is wrong
   */
  public static Size resize(String text) {
    JsonNode node = json(text);
    if (node == null || !node.path("type").asText("").equals("resize")) {
      throw new IllegalArgumentException("a text frame must be {\"type\":\"resize\",...}");
    }
    JsonNode cols = node.path("cols");
    JsonNode rows = node.path("rows");
    if (!cols.canConvertToInt()
        || !cols.isIntegralNumber()
        || !rows.isIntegralNumber()
        || !rows.canConvertToInt()) {
      throw new IllegalArgumentException("a resize frame needs integer cols and rows");
    }
    return new Size(cols.intValue(), rows.intValue());
  }

  /** The server's last frame, before its normal close: the process's exit code. */
  public static String exitFrame(int exitCode) {
    return "{\"type\":\"exit\",\"exit_code\":" + exitCode + "}";
  }

  /** The exit code of an {@linkplain #exitFrame exit frame}, or null for any other text. */
  public static @Nullable Integer exitCode(String text) {
    JsonNode node = json(text);
    if (node == null || !node.path("type").asText("").equals("exit")) {
      return null;
    }
    JsonNode code = node.path("exit_code");
    return code.isIntegralNumber() && code.canConvertToInt() ? code.intValue() : null;
  }

  private static @Nullable JsonNode json(String text) {
    try {
      JsonNode node = MAPPER.readTree(text);
      return node != null && node.isObject() ? node : null;
    } catch (JacksonException e) {
      return null;
    }
  }
}
