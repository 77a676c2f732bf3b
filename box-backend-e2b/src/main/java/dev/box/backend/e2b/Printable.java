package dev.box.backend.e2b;

import java.nio.charset.StandardCharsets;

/** A short printable excerpt of what the remote side sent, for error messages. */
final class Printable {
  private static final int MAX_CHARS = 300;

  private Printable() {}

  static String excerpt(byte[] bytes) {
    String text =
        new String(bytes, 0, Math.min(bytes.length, MAX_CHARS * 4), StandardCharsets.UTF_8)
            .replaceAll("[\\p{Cntrl}\\s]+", " ")
            .strip();
    return text.length() > MAX_CHARS ? text.substring(0, MAX_CHARS) + "..." : text;
  }
}
