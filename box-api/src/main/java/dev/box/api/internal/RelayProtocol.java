package dev.box.api.internal;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * The stdio relay's frames and close codes as docs/RELAY.md describes them, written by the server
 * and read by the client: the start frame of raw mode, the reasons of the normal and offset-gone
 * closes, and the close code and reason of each error.
 *
 * <p>An error ends the relay with {@code 4000 +} the HTTP status its code answers with before the
 * upgrade (4404 for not found, 4409 for a conflict, 4410 for an offset no longer buffered), or 1011
 * for an internal error, and the reason {@code <error code>: <message>} cut to the 123 bytes a
 * close frame carries.
 */
public final class RelayProtocol {
  /** Stdout ended; the reason is {@code exit_code=N}, or {@link #STDOUT_CLOSED}. */
  public static final int NORMAL_CLOSURE = 1000;

  /** Never sent: the JDK reports a connection that ended without a close frame with this code. */
  public static final int ABNORMAL_CLOSURE = 1006;

  /** A stdout line does not fit in the buffer, so line mode cannot deliver it whole. */
  public static final int LINE_TOO_LONG = 1009;

  /** An unexpected server error (an {@code internal_error}). */
  public static final int INTERNAL_ERROR = 1011;

  /** The requested offset is no longer buffered; the reason names the first available one. */
  public static final int OFFSET_GONE = 4410;

  /** The reason of a normal close when stdout ended but the process had not exited yet. */
  public static final String STDOUT_CLOSED = "stdout closed";

  /** The most bytes of UTF-8 a close frame's reason may have. */
  static final int MAX_REASON_BYTES = 123;

  private static final int ERROR_BASE = 4000;
  private static final String EXIT_CODE = "exit_code=";
  private static final String FIRST_AVAILABLE = "first_available=";
  private static final String ELLIPSIS = "...";
  private static final ObjectMapper MAPPER = BoxJson.newMapper();

  private RelayProtocol() {}

  /** The TEXT frame that opens raw mode: {@code {"type":"start","offset":N}}. */
  public static String startFrame(long offset) {
    return "{\"type\":\"start\",\"offset\":" + offset + "}";
  }

  /** The offset of a {@linkplain #startFrame start frame}, or null for any other text. */
  public static @Nullable Long startOffset(String text) {
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

  /** The reason of the normal close after stdout ended: {@code exit_code=N}. */
  public static String exitReason(int exitCode) {
    return EXIT_CODE + exitCode;
  }

  /** The exit code a normal close reason carries, or null when it carries none. */
  public static @Nullable Integer exitCode(String reason) {
    if (!reason.startsWith(EXIT_CODE)) {
      return null;
    }
    try {
      return Integer.valueOf(reason.substring(EXIT_CODE.length()).strip());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The reason of an {@link #OFFSET_GONE} close: {@code offset gone; first_available=M}. */
  public static String offsetGoneReason(long firstAvailable) {
    return "offset gone; " + FIRST_AVAILABLE + firstAvailable;
  }

  /** The first available offset an offset-gone reason names, or null when it names none. */
  public static @Nullable Long firstAvailable(String reason) {
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

  /** The close code of an error: 1011 for an internal error, else 4000 + its HTTP status. */
  public static int closeCode(BoxErrorCode code) {
    return code == BoxErrorCode.INTERNAL_ERROR ? INTERNAL_ERROR : ERROR_BASE + code.httpStatus();
  }

  /** The close reason of an error: {@code <error code>: <message>}, at most 123 bytes of UTF-8. */
  public static String closeReason(BoxException error) {
    String reason = error.code().wireName() + ": " + error.getMessage();
    byte[] bytes = reason.getBytes(StandardCharsets.UTF_8);
    if (bytes.length <= MAX_REASON_BYTES) {
      return reason;
    }
    int end = MAX_REASON_BYTES - ELLIPSIS.length();
    while ((bytes[end] & 0xC0) == 0x80) {
      end--; // Not inside a character.
    }
    return new String(bytes, 0, end, StandardCharsets.UTF_8) + ELLIPSIS;
  }

  /**
   * The error a close reports, as the exception the server raised: for 1011 and 4400–4599, the code
   * the reason names (or else the one the close code's HTTP status suggests) with the rest of the
   * reason as its message. Null for a close that reports no error, such as 1000 or 1009.
   */
  public static @Nullable BoxException failure(int code, String reason) {
    BoxErrorCode byStatus;
    if (code == INTERNAL_ERROR) {
      byStatus = BoxErrorCode.INTERNAL_ERROR;
    } else if (code >= ERROR_BASE + 400 && code <= ERROR_BASE + 599) {
      byStatus = BoxErrorCode.forHttpStatus(code - ERROR_BASE);
    } else {
      return null;
    }
    int colon = reason.indexOf(": ");
    if (colon > 0) {
      String wire = reason.substring(0, colon);
      BoxErrorCode named = BoxErrorCode.fromWire(wire);
      if (named.wireName().equals(wire)) {
        return BoxException.of(named, reason.substring(colon + 2));
      }
    }
    return BoxException.of(byStatus, reason);
  }
}
