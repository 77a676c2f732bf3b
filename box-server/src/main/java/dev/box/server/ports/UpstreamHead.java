package dev.box.server.ports;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The head of an HTTP/1.1 response read from a server inside a sandbox: its status and headers,
 * read within {@link #MAX_BYTES} and {@link #MAX_HEADERS}, whatever the server sends. The server is
 * not trusted: a head that is too long, malformed or not HTTP/1.x is refused.
 *
 * @param status the status code, 100 to 599
 * @param headers the header fields in order, names as sent
 */
record UpstreamHead(int status, List<Map.Entry<String, String>> headers) {
  /** The most bytes a response head may take, status line included. */
  static final int MAX_BYTES = 64 * 1024;

  /** The most header fields a response head may carry. */
  static final int MAX_HEADERS = 256;

  /** Copies the list. */
  UpstreamHead {
    headers = List.copyOf(headers);
  }

  /**
   * Reads one response head from {@code in}, leaving {@code in} at the first byte after it.
   *
   * @return the head, or null when {@code in} ended before its first byte
   * @throws Malformed when what came is not a response head within the bounds
   * @throws IOException when reading fails
   */
  static @Nullable UpstreamHead read(InputStream in) throws IOException {
    List<String> lines = new ArrayList<>();
    int total = 0;
    StringBuilder line = new StringBuilder();
    while (true) {
      int b = in.read();
      if (b < 0) {
        if (total == 0) {
          return null;
        }
        throw new Malformed("the connection ended inside the response head");
      }
      if (++total > MAX_BYTES) {
        throw new Malformed("the response head is longer than " + MAX_BYTES + " bytes");
      }
      if (b == '\n') {
        int end = line.length();
        if (end > 0 && line.charAt(end - 1) == '\r') {
          line.setLength(end - 1);
        }
        if (line.isEmpty()) {
          return parse(lines);
        }
        if (lines.size() > MAX_HEADERS) {
          throw new Malformed("the response head has more than " + MAX_HEADERS + " fields");
        }
        lines.add(line.toString());
        line.setLength(0);
      } else {
        // ISO-8859-1, as HTTP/1.1 heads are: every byte one char.
        line.append((char) b);
      }
    }
  }

  private static UpstreamHead parse(List<String> lines) {
    if (lines.isEmpty()) {
      throw new Malformed("the response has no status line");
    }
    String statusLine = lines.getFirst();
    int status = -1;
    if (statusLine.startsWith("HTTP/1.") && statusLine.length() >= 12) {
      String code = statusLine.substring(9, 12);
      if (statusLine.charAt(8) == ' ' && code.chars().allMatch(c -> c >= '0' && c <= '9')) {
        status = Integer.parseInt(code);
      }
    }
    if (status < 100 || status > 599) {
      throw new Malformed("the response does not start with an HTTP/1.x status line");
    }
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    for (String field : lines.subList(1, lines.size())) {
      int colon = field.indexOf(':');
      if (colon <= 0 || !token(field.substring(0, colon)) || field.indexOf('\r') >= 0) {
        throw new Malformed("the response head has a malformed field");
      }
      headers.add(Map.entry(field.substring(0, colon), field.substring(colon + 1).strip()));
    }
    return new UpstreamHead(status, headers);
  }

  private static boolean token(String name) {
    return name.chars().allMatch(c -> c > ' ' && c < 127 && "\"(),/:;<=>?@[\\]{}".indexOf(c) < 0);
  }

  /** The values of the fields named {@code name}, any case, in order. */
  List<String> values(String name) {
    return headers.stream()
        .filter(h -> h.getKey().equalsIgnoreCase(name))
        .map(Map.Entry::getValue)
        .toList();
  }

  /** The one value of {@code name}, or null; a field sent twice with two values is refused. */
  @Nullable String value(String name) {
    List<String> values = values(name).stream().distinct().toList();
    if (values.size() > 1) {
      throw new Malformed("the response has " + name + " more than once");
    }
    return values.isEmpty() ? null : values.getFirst();
  }

  /** Whether the body is chunked: the last transfer coding is {@code chunked}. */
  boolean chunked() {
    String codings = String.join(",", values("Transfer-Encoding")).toLowerCase(Locale.ROOT);
    if (codings.isBlank()) {
      return false;
    }
    if (!codings.strip().equals("chunked")) {
      throw new Malformed("the response uses a transfer coding other than chunked: " + codings);
    }
    return true;
  }

  /** The body's length from Content-Length, or -1 when it has none. */
  long contentLength() {
    String value = value("Content-Length");
    if (value == null) {
      return -1;
    }
    try {
      long length = Long.parseLong(value);
      if (length >= 0) {
        return length;
      }
    } catch (NumberFormatException e) {
      // Falls through.
    }
    throw new Malformed("the response has a malformed Content-Length");
  }

  /** The head as bytes, for a caller that relays it unchanged. */
  static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }

  /** What the server in the sandbox sent is not a response Box relays. */
  static final class Malformed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Malformed(String message) {
      super(message, null, false, false);
    }
  }
}
