package dev.box.backend.boxlite;

/** A short printable excerpt of what the BoxLite server sent, for logs and error messages. */
final class Printable {
  private static final int MAX_CHARS = 300;

  private Printable() {}

  static String excerpt(String text) {
    String clean =
        text.substring(0, Math.min(text.length(), MAX_CHARS * 4))
            .replaceAll("[\\p{Cntrl}\\s]+", " ")
            .strip();
    return clean.length() > MAX_CHARS ? clean.substring(0, MAX_CHARS) + "..." : clean;
  }
}
