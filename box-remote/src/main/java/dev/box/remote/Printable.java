package dev.box.remote;

import java.nio.charset.StandardCharsets;

/** A short printable excerpt of what the remote side sent, for logs and error messages. */
public final class Printable {
  private static final int MAX_CHARS = 300;

  private Printable() {}

  /** The first characters of {@code text}, control characters and runs of space folded. */
  public static String excerpt(String text) {
    return fold(text.substring(0, Math.min(text.length(), MAX_CHARS * 4)));
  }

  /** The first characters of {@code bytes} read as UTF-8, folded as {@link #excerpt(String)}. */
  public static String excerpt(byte[] bytes) {
    return fold(
        new String(bytes, 0, Math.min(bytes.length, MAX_CHARS * 4), StandardCharsets.UTF_8));
  }

  private static String fold(String text) {
    String clean = text.replaceAll("[\\p{Cntrl}\\s]+", " ").strip();
    return clean.length() > MAX_CHARS ? clean.substring(0, MAX_CHARS) + "..." : clean;
  }
}
