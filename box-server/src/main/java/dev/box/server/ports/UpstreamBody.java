package dev.box.server.ports;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Copies the body of a response from a server inside a sandbox to the client as it comes, through
 * one buffer of {@link #BUFFER} bytes: never a whole body, never a whole chunk. A chunk-size line
 * and the trailer are bounded too; a body that breaks off or is malformed is an {@link
 * IOException}, which aborts the client's response.
 */
final class UpstreamBody {
  /** The buffer each read of the body goes through. */
  static final int BUFFER = 64 * 1024;

  /** The most bytes of a chunk-size line, extensions included, or of one trailer line. */
  private static final int MAX_LINE = 4096;

  /** The most trailer bytes after the last chunk (they are read and dropped). */
  private static final int MAX_TRAILER = 16 * 1024;

  private UpstreamBody() {}

  /** Copies exactly {@code length} bytes, flushing {@code out} after each read. */
  static void copyLength(InputStream in, OutputStream out, long length) throws IOException {
    byte[] buffer = new byte[BUFFER];
    long left = length;
    while (left > 0) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (n < 0) {
        throw new IOException("the server in the sandbox ended the body " + left + " bytes short");
      }
      out.write(buffer, 0, n);
      out.flush();
      left -= n;
    }
  }

  /** Copies until {@code in} ends, flushing {@code out} after each read. */
  static void copyToEnd(InputStream in, OutputStream out) throws IOException {
    byte[] buffer = new byte[BUFFER];
    for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
      out.write(buffer, 0, n);
      out.flush();
    }
  }

  /** Decodes a chunked body, copying its data; the trailer is read and dropped. */
  static void copyChunked(InputStream in, OutputStream out) throws IOException {
    while (true) {
      long size = chunkSize(line(in));
      if (size == 0) {
        break;
      }
      copyLength(in, out, size);
      if (!line(in).isEmpty()) {
        throw new IOException("a chunk of the server in the sandbox is longer than its size");
      }
    }
    int trailer = 0;
    for (String field = line(in); !field.isEmpty(); field = line(in)) {
      trailer += field.length() + 2;
      if (trailer > MAX_TRAILER) {
        throw new IOException("the trailer of the server in the sandbox is too long");
      }
    }
  }

  private static long chunkSize(String line) throws IOException {
    int end = line.indexOf(';');
    String hex = (end < 0 ? line : line.substring(0, end)).strip();
    if (hex.isEmpty()
        || hex.length() > 15
        || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
      throw new IOException("a malformed chunk size from the server in the sandbox");
    }
    return Long.parseLong(hex, 16);
  }

  /** One line (CRLF or LF ended) of at most {@link #MAX_LINE} bytes, without its end. */
  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the server in the sandbox ended a chunked body early");
      }
      if (b == '\n') {
        int end = line.length();
        if (end > 0 && line.charAt(end - 1) == '\r') {
          line.setLength(end - 1);
        }
        return line.toString();
      }
      if (line.length() >= MAX_LINE) {
        throw new IOException("a line of a chunked body is longer than " + MAX_LINE + " bytes");
      }
      line.append((char) b);
    }
  }
}
