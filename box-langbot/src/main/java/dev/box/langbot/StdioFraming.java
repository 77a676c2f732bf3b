package dev.box.langbot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The framing of LangBot's control channel when it runs over stdio: one JSON message per line, and
 * a message over {@value #CHUNK_BYTES} bytes as {@code chunk_start}, {@code chunk_data}... and
 * {@code chunk_end} lines. {@link #encode} is stateless; {@link #decode} keeps the message being
 * reassembled, so use one instance per direction of one stream.
 */
public final class StdioFraming {
  /** Messages larger than this many UTF-8 bytes are chunked, and no chunk carries more. */
  public static final int CHUNK_BYTES = 16 * 1024;

  private final ObjectMapper mapper;
  private @Nullable StringBuilder assembling;

  /** A framing that builds its control lines with {@code mapper}. */
  public StdioFraming(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** The lines (without newline) that carry {@code message}. */
  public List<String> encode(String message) throws JsonProcessingException {
    int total = message.getBytes(StandardCharsets.UTF_8).length;
    if (total <= CHUNK_BYTES) {
      return List.of(message);
    }
    List<String> lines = new ArrayList<>();
    ObjectNode start =
        mapper.createObjectNode().put("type", "chunk_start").put("total_size", total);
    lines.add(mapper.writeValueAsString(start));
    int offset = 0;
    while (offset < message.length()) {
      int end = chunkEnd(message, offset);
      ObjectNode data =
          mapper
              .createObjectNode()
              .put("type", "chunk_data")
              .put("data", message.substring(offset, end))
              .put("offset", offset);
      lines.add(mapper.writeValueAsString(data));
      offset = end;
    }
    lines.add("{\"type\":\"chunk_end\"}");
    return lines;
  }

  /**
   * Feeds one received line; returns the complete message it finishes, or null while a chunked
   * message is still being assembled (or for a stray chunk line, which is dropped).
   */
  public @Nullable String decode(String line) throws JsonProcessingException {
    if (!line.contains("\"chunk_")) {
      return line;
    }
    JsonNode node = mapper.readTree(line);
    String type = node.path("type").asText("");
    return switch (type) {
      case "chunk_start" -> {
        assembling = new StringBuilder(Math.min(node.path("total_size").asInt(0), 16 << 20));
        yield null;
      }
      case "chunk_data" -> {
        if (assembling != null) {
          assembling.append(node.path("data").asText());
        }
        yield null;
      }
      case "chunk_end" -> {
        String message = assembling == null ? null : assembling.toString();
        assembling = null;
        yield message;
      }
      default -> line;
    };
  }

  /** The end of the chunk starting at {@code from}: at most CHUNK_BYTES, never in a pair. */
  private static int chunkEnd(String message, int from) {
    int bytes = 0;
    int i = from;
    while (i < message.length()) {
      int cp = message.codePointAt(i);
      int size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (bytes + size > CHUNK_BYTES) {
        break;
      }
      bytes += size;
      i += Character.charCount(cp);
    }
    return i;
  }
}
