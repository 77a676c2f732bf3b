package dev.box.langbot;

/** Trimming of chosen characters, rather than white space, from both ends of a string. */
final class EdgeTrim {
  private EdgeTrim() {}

  /** {@code value} without the characters of {@code edges} at its start and at its end. */
  static String trim(CharSequence value, String edges) {
    int start = 0;
    int end = value.length();
    while (start < end && edges.indexOf(value.charAt(start)) >= 0) {
      start++;
    }
    while (end > start && edges.indexOf(value.charAt(end - 1)) >= 0) {
      end--;
    }
    return value.subSequence(start, end).toString();
  }
}
