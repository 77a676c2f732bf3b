package dev.box.agenthost;

/**
 * Output cut to what a model should read, as the reference cuts exec output: text longer than the
 * limit keeps its first 60 % and its last 40 % with the notice {@code "\n\n... [N characters
 * truncated] ...\n\n"} between them, sized so that the whole, notice included, stays within the
 * limit. Characters are Unicode code points (as Python counts them): a surrogate pair is never
 * split.
 *
 * @param text the text to show
 * @param truncated whether anything was cut out
 */
public record OutputCut(String text, boolean truncated) {
  /** The reference's limit: 4,000 characters per stream. */
  public static final int DEFAULT_LIMIT = 4000;

  /** {@code text} cut to {@link #DEFAULT_LIMIT} characters. */
  public static OutputCut of(String text) {
    return of(text, DEFAULT_LIMIT);
  }

  /**
   * {@code text} cut to {@code limit} code points; text within the limit is returned as it is.
   *
   * @throws IllegalArgumentException when {@code limit} is too small to hold the notice
   */
  public static OutputCut of(String text, int limit) {
    int length = text.codePointCount(0, text.length());
    if (length <= limit) {
      return new OutputCut(text, false);
    }
    // The notice's length depends on the count it names, which depends on the notice's length:
    // start from the count without a notice and grow it until the whole fits.
    int omitted = length - limit;
    while (true) {
      String notice = notice(omitted);
      int room = limit - notice.length();
      if (room < 0) {
        throw new IllegalArgumentException("limit " + limit + " cannot hold the notice");
      }
      int head = room * 6 / 10;
      int tail = room - head;
      if (length - head - tail == omitted) {
        int headEnd = text.offsetByCodePoints(0, head);
        int tailStart = text.offsetByCodePoints(text.length(), -tail);
        return new OutputCut(text.substring(0, headEnd) + notice + text.substring(tailStart), true);
      }
      omitted = length - head - tail;
    }
  }

  private static String notice(int omitted) {
    return "\n\n... [" + omitted + " characters truncated] ...\n\n";
  }
}
