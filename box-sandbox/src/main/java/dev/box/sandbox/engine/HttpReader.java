package dev.box.sandbox.engine;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Reads one HTTP/1.1 answer of the engine through a buffer: the head, then the body it announces
 * (by Content-Length, chunked, or up to the end of the connection). Every line, the number of
 * header lines and the body are bounded, and whatever is malformed or cut short is an {@link
 * IOException} that says what was wrong.
 *
 * <p>Not thread-safe: one reader per connection. After the head of an upgraded answer, {@link
 * #stream()} goes on with the bytes the buffer already holds.
 */
public final class HttpReader {
  static final int MAX_LINE_BYTES = 8 * 1024;
  static final int MAX_HEADER_LINES = 100;
  static final int MAX_BODY_BYTES = 64 * 1024 * 1024;

  private static final int BUFFER_BYTES = 8 * 1024;
  private static final int SHOWN_CHARS = 100;

  private final InputStream in;

  public HttpReader(InputStream source) {
    this.in = new BufferedInputStream(source, BUFFER_BYTES);
  }

  /** The head of an answer: its status and how its body is delimited. */
  record Head(int status, long contentLength, boolean chunked) {}

  /** The rest of the connection, starting with the first byte this reader has not consumed. */
  public InputStream stream() {
    return in;
  }

  /** Reads the status line and the header lines up to the blank line that ends the head. */
  Head readHead() throws IOException {
    int status = status(readLine("status line"));
    long length = -1;
    boolean chunked = false;
    for (int count = 0; ; count++) {
      String line = readLine("header line");
      if (line.isEmpty()) {
        return new Head(status, length, chunked);
      }
      if (count == MAX_HEADER_LINES) {
        throw new IOException(
            "the engine's answer has more than " + MAX_HEADER_LINES + " header lines");
      }
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new IOException("a header line of the engine's answer is malformed: " + shown(line));
      }
      String name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).strip();
      if (name.equals("content-length")) {
        long announced = contentLength(value);
        if (length >= 0 && length != announced) {
          throw new IOException("the engine's answer has two different Content-Length headers");
        }
        length = announced;
      } else if (name.equals("transfer-encoding")) {
        chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
      }
    }
  }

  /** Reads the body {@code head} announces; none for 204 and 304. */
  byte[] readBody(Head head) throws IOException {
    if (head.status() == 204 || head.status() == 304) {
      return new byte[0];
    }
    if (head.chunked()) {
      return readChunked();
    }
    if (head.contentLength() >= 0) {
      if (head.contentLength() > MAX_BODY_BYTES) {
        throw tooLarge();
      }
      byte[] body = in.readNBytes((int) head.contentLength());
      if (body.length != head.contentLength()) {
        throw cutShort();
      }
      return body;
    }
    return in.readNBytes(MAX_BODY_BYTES);
  }

  /**
   * The body {@code head} announces as a stream read as it arrives, with no bound of its own (the
   * caller bounds what it reads): the chunks decoded, or Content-Length bytes, or up to the end of
   * the connection. A body cut short is an {@link IOException} at the read that finds it so.
   */
  InputStream bodyStream(Head head) {
    if (head.status() == 204 || head.status() == 304) {
      return InputStream.nullInputStream();
    }
    if (head.chunked()) {
      return new ChunkedBody();
    }
    return head.contentLength() >= 0 ? new LengthBody(head.contentLength()) : in;
  }

  private byte[] readChunked() throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      long size = chunkSize(readLine("chunk size line"));
      if (size == 0) {
        readTrailers();
        return body.toByteArray();
      }
      if (size > MAX_BODY_BYTES - body.size()) {
        throw tooLarge();
      }
      byte[] chunk = in.readNBytes((int) size);
      if (chunk.length != size) {
        throw cutShort();
      }
      body.write(chunk);
      readChunkEnd();
    }
  }

  /** Reads the CRLF after a chunk's data. */
  private void readChunkEnd() throws IOException {
    int cr = in.read();
    int lf = in.read();
    if (lf < 0) {
      throw cutShort();
    }
    if (cr != '\r' || lf != '\n') {
      throw new IOException("a chunk of the engine's answer does not end with CRLF");
    }
  }

  private void readTrailers() throws IOException {
    for (int count = 0; !readLine("trailer line").isEmpty(); count++) {
      if (count == MAX_HEADER_LINES) {
        throw new IOException(
            "the engine's answer has more than " + MAX_HEADER_LINES + " trailer lines");
      }
    }
  }

  /**
   * Reads one line ending in LF (a CR before it is dropped), of at most {@link #MAX_LINE_BYTES}.
   *
   * @param what what the line is, for the message of the exception
   */
  public String readLine(String what) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      if (b == '\n') {
        byte[] bytes = line.toByteArray();
        int n =
            bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
        return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
      }
      if (line.size() == MAX_LINE_BYTES) {
        throw new IOException(
            "a " + what + " of the engine's answer is longer than " + MAX_LINE_BYTES + " bytes");
      }
      line.write(b);
    }
    throw new IOException("the engine closed the connection before the end of a " + what);
  }

  /** The status code of {@code HTTP/1.x NNN [reason]}. */
  static int status(String line) throws IOException {
    String[] parts = line.split(" ", 3);
    if (parts.length < 2
        || !parts[0].startsWith("HTTP/1.")
        || parts[1].length() != 3
        || !digits(parts[1], 10)) {
      throw new IOException("not an HTTP answer from the engine: " + shown(line));
    }
    return Integer.parseInt(parts[1]);
  }

  /** A Content-Length value: decimal digits only, within a long. */
  static long contentLength(String value) throws IOException {
    if (!digits(value, 10)) {
      throw new IOException("the engine's answer has an invalid Content-Length: " + shown(value));
    }
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IOException(
          "the engine's answer has a Content-Length out of range: " + shown(value), e);
    }
  }

  /** The size of a chunk: hexadecimal digits, then any chunk extension after a semicolon. */
  static long chunkSize(String line) throws IOException {
    int semicolon = line.indexOf(';');
    String hex = (semicolon < 0 ? line : line.substring(0, semicolon)).strip();
    if (!digits(hex, 16)) {
      throw new IOException("the engine's answer has an invalid chunk size: " + shown(line));
    }
    try {
      return Long.parseLong(hex, 16);
    } catch (NumberFormatException e) {
      throw new IOException("the engine's answer has a chunk size out of range: " + shown(line), e);
    }
  }

  /** Whether {@code text} is one or more ASCII digits of {@code radix} (10 or 16), without sign. */
  private static boolean digits(String text, int radix) {
    if (text.isEmpty()) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean hex = (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!(c >= '0' && c <= '9') && !(radix == 16 && hex)) {
        return false;
      }
    }
    return true;
  }

  /** {@code text} shortened and with control characters replaced, to be quoted in a message. */
  private static String shown(String text) {
    StringBuilder shown = new StringBuilder();
    for (int i = 0; i < Math.min(text.length(), SHOWN_CHARS); i++) {
      char c = text.charAt(i);
      shown.append(c < 0x20 || c >= 0x7f ? '?' : c);
    }
    return text.length() > SHOWN_CHARS ? shown + "..." : shown.toString();
  }

  /** A body read as it arrives, a run of {@code left} bytes at a time. */
  private abstract class StreamedBody extends InputStream {
    long left;

    /** Starts the next run of bytes, setting {@code left}; false at the end of the body. */
    abstract boolean nextRun() throws IOException;

    /** Reads what follows a run. */
    void endOfRun() throws IOException {}

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      if (length == 0) {
        return 0;
      }
      if (left == 0 && !nextRun()) {
        return -1;
      }
      int n = in.read(buffer, offset, (int) Math.min(length, left));
      if (n < 0) {
        throw cutShort();
      }
      left -= n;
      if (left == 0) {
        endOfRun();
      }
      return n;
    }
  }

  /** The decoded chunks of a chunked body, one chunk a run. */
  private final class ChunkedBody extends StreamedBody {
    private boolean ended;

    @Override
    boolean nextRun() throws IOException {
      if (ended) {
        return false;
      }
      left = chunkSize(readLine("chunk size line"));
      if (left == 0) {
        ended = true;
        readTrailers();
        return false;
      }
      return true;
    }

    @Override
    void endOfRun() throws IOException {
      readChunkEnd();
    }
  }

  /** A body of a known length, one run. */
  private final class LengthBody extends StreamedBody {
    LengthBody(long length) {
      this.left = length;
    }

    @Override
    boolean nextRun() {
      return false;
    }
  }

  private static IOException tooLarge() {
    return new IOException("the engine's answer is too large");
  }

  private static IOException cutShort() {
    return new IOException("the engine closed the connection in the middle of an answer");
  }
}
