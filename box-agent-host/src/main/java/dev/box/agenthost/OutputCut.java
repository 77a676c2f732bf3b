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
    return cut(text, length, text, limit);
  }

  /**
   * The cut of a text known by its ends only, as {@link #of(String, int)} would cut {@code head},
   * then {@code dropped} code points no longer held, then {@code tail}: the notice counts the
   * dropped ones too. This lets a bounded buffer of an endless stream keep its first and last
   * {@code limit} code points and still show what a model would see of the whole.
   *
   * @param head the first code points of the text, at least {@code limit} of them when {@code
   *     dropped} is positive
   * @param dropped how many code points came between {@code head} and {@code tail}
   * @param tail the last code points of the text, at least {@code limit} of them when {@code
   *     dropped} is positive
   * @throws IllegalArgumentException when an end holds too little, or {@code limit} is too small
   */
  public static OutputCut ofEnds(String head, long dropped, String tail, int limit) {
    if (dropped == 0) {
      return of(head + tail, limit);
    }
    long headLength = head.codePointCount(0, head.length());
    long tailLength = tail.codePointCount(0, tail.length());
    if (dropped < 0 || headLength < limit || tailLength < limit) {
      throw new IllegalArgumentException(
          "each end must hold at least " + limit + " code points when some were dropped");
    }
    return cut(head, headLength + dropped + tailLength, tail, limit);
  }

  /**
   * The cut of a text of {@code length} code points longer than {@code limit}, whose head comes
   * from {@code start} and whose tail from {@code end}.
   */
  private static OutputCut cut(String start, long length, String end, int limit) {
    // The notice's length depends on the count it names, which depends on the notice's length:
    // start from the count without a notice and grow it until the whole fits.
    long omitted = length - limit;
    while (true) {
      String notice = notice(omitted);
      int room = limit - notice.length();
      if (room < 0) {
        throw new IllegalArgumentException("limit " + limit + " cannot hold the notice");
      }
      int head = room * 6 / 10;
      int tail = room - head;
      if (length - head - tail == omitted) {
        int headEnd = start.offsetByCodePoints(0, head);
        int tailStart = end.offsetByCodePoints(end.length(), -tail);
        return new OutputCut(start.substring(0, headEnd) + notice + end.substring(tailStart), true);
      }
      omitted = length - head - tail;
    }
  }

  private static String notice(long omitted) {
    return "\n\n... [" + omitted + " characters truncated] ...\n\n";
  }
}
