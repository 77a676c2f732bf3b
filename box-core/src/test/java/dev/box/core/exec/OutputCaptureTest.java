package dev.box.core.exec;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** How one output stream is kept while it is read: all of it, or its head and tail. */
class OutputCaptureTest {

  private static byte[] letters(int length, long seed) {
    Random random = new Random(seed);
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      bytes[i] = (byte) ('a' + random.nextInt(26));
    }
    return bytes;
  }

  private static OutputCapture captureOf(int limit, byte[] bytes, int chunk) {
    OutputCapture capture = new OutputCapture(limit);
    for (int offset = 0; offset < bytes.length; offset += chunk) {
      capture.write(bytes, offset, Math.min(chunk, bytes.length - offset));
    }
    return capture;
  }

  private static OutputCapture captureOf(int limit, byte[] bytes) {
    return captureOf(limit, bytes, Math.max(1, bytes.length));
  }

  /** The part of {@code rendered} between the kept head and the kept tail. */
  private static String marker(String rendered, String head, String tail) {
    assertThat(rendered).startsWith(head).endsWith(tail);
    return rendered.substring(head.length(), rendered.length() - tail.length());
  }

  /** Valid UTF-8 of exactly {@code length} bytes, mixing one- to four-byte characters. */
  private static byte[] utf8OfLength(int length) {
    String[] cycle = {"h", "é", "✓", "😀", "\n", " ", "\t", "\r"};
    StringBuilder text = new StringBuilder();
    int size = 0;
    for (int i = 0; ; i++) {
      String next = cycle[i % cycle.length];
      int bytes = next.getBytes(UTF_8).length;
      if (size + bytes > length) {
        break;
      }
      text.append(next);
      size += bytes;
    }
    text.append("x".repeat(length - size));
    return text.toString().getBytes(UTF_8);
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 50, 99, 100})
  void outputUpToTheLimit_isKeptByteExact(int length) {
    byte[] bytes = utf8OfLength(length);
    assertThat(bytes).hasSize(length);

    OutputCapture capture = captureOf(100, bytes);

    assertThat(capture.droppedBytes()).isZero();
    assertThat(capture.render().getBytes(UTF_8)).isEqualTo(bytes);
  }

  @Test
  void outputBelowTheLimit_isReturnedAsProducedWithoutStripping() {
    byte[] bytes = "  line one\n\n\tline two \r\n\n".getBytes(UTF_8);

    OutputCapture capture = captureOf(1024, bytes);

    assertThat(capture.render()).isEqualTo("  line one\n\n\tline two \r\n\n");
    assertThat(capture.droppedBytes()).isZero();
  }

  @Test
  void outputAboveTheLimit_keepsHeadAndTailWithOneMarkerLine() {
    byte[] bytes = letters(250, 1);
    String head = new String(bytes, 0, 50, US_ASCII);
    String tail = new String(bytes, 200, 50, US_ASCII);

    OutputCapture capture = captureOf(100, bytes);
    String rendered = capture.render();

    assertThat(capture.droppedBytes()).isEqualTo(150);
    String marker = marker(rendered, head, tail);
    assertThat(marker).startsWith("\n").endsWith("\n");
    assertThat(marker.chars().filter(c -> c == '\n')).hasSize(2);
    assertThat(marker).containsPattern("\\b150\\b");
  }

  @Test
  void outputOneByteAboveTheLimit_dropsExactlyOneByte() {
    byte[] bytes = letters(101, 2);

    OutputCapture capture = captureOf(100, bytes);

    assertThat(capture.droppedBytes()).isEqualTo(1);
    String marker =
        marker(
            capture.render(),
            new String(bytes, 0, 50, US_ASCII),
            new String(bytes, 51, 50, US_ASCII));
    assertThat(marker).containsPattern("\\b1\\b");
  }

  @Test
  void oddLimit_keepsLimitBytesInAll() {
    byte[] bytes = "0123456789".getBytes(US_ASCII);

    OutputCapture capture = captureOf(5, bytes);

    assertThat(capture.droppedBytes()).isEqualTo(5);
    String rendered = capture.render();
    String marker = rendered.substring(2, rendered.length() - 3);
    assertThat(rendered.substring(0, 2) + rendered.substring(rendered.length() - 3))
        .isEqualTo("01789");
    assertThat(marker).startsWith("\n").endsWith("\n").containsPattern("\\b5\\b");
  }

  @ParameterizedTest(name = "chunks of {0}")
  @ValueSource(ints = {1, 2, 3, 7, 49, 50, 51, 99, 100, 101, 333, 4096})
  void manySmallWrites_giveTheSameResultAsOneWrite(int chunk) {
    for (int length : new int[] {60, 100, 150, 1000}) {
      byte[] bytes = letters(length, length);
      OutputCapture whole = captureOf(100, bytes);

      OutputCapture pieces = captureOf(100, bytes, chunk);

      assertThat(pieces.render()).as("length %d", length).isEqualTo(whole.render());
      assertThat(pieces.droppedBytes()).isEqualTo(whole.droppedBytes());
    }
  }

  @Test
  void irregularWrites_keepTheExactHeadAndTail() {
    byte[] bytes = letters(10_000, 3);
    Random random = new Random(4);
    OutputCapture capture = new OutputCapture(1000);
    int offset = 0;
    while (offset < bytes.length) {
      int length = Math.min(random.nextInt(700), bytes.length - offset);
      capture.write(bytes, offset, length);
      offset += length;
    }

    assertThat(capture.droppedBytes()).isEqualTo(9000);
    marker(
        capture.render(),
        new String(bytes, 0, 500, US_ASCII),
        new String(bytes, 9500, 500, US_ASCII));
  }

  @Test
  void writeWithAnOffset_takesOnlyThatSlice() {
    byte[] buffer = "xxHELLOyy".getBytes(US_ASCII);
    OutputCapture capture = new OutputCapture(100);

    capture.write(buffer, 2, 5);

    assertThat(capture.render()).isEqualTo("HELLO");
  }

  @Test
  void multiByteCharacterAcrossTheHeadTailBoundary_staysIntactWhenNothingIsDropped() {
    byte[] bytes = "€€€x".getBytes(UTF_8);
    assertThat(bytes).hasSize(10);

    assertThat(captureOf(10, bytes).render()).isEqualTo("€€€x");
    assertThat(captureOf(10, bytes, 1).render()).isEqualTo("€€€x");
  }

  @Test
  void multiByteText_staysIntactWhenNothingIsDropped() {
    String text = "日本語 😀 ünïcödé ✓";
    byte[] bytes = text.getBytes(UTF_8);

    for (int chunk = 1; chunk <= bytes.length; chunk++) {
      assertThat(captureOf(bytes.length, bytes, chunk).render()).isEqualTo(text);
    }
  }

  @Test
  void invalidUtf8_becomesTheReplacementCharacter() {
    byte[] bytes = {'a', (byte) 0xFF, 'b', (byte) 0x80, 'c'};

    assertThat(captureOf(100, bytes).render()).isEqualTo("a\uFFFDb\uFFFDc");
  }

  @Test
  void invalidUtf8InHeadAndTail_becomesTheReplacementCharacter() {
    byte[] bytes = letters(300, 5);
    bytes[0] = (byte) 0xFE;
    bytes[299] = (byte) 0xFF;

    String rendered = captureOf(100, bytes).render();

    assertThat(rendered).startsWith("\uFFFD").endsWith("\uFFFD");
  }

  @Test
  void freeze_dropsLaterBytes() {
    OutputCapture capture = new OutputCapture(100);
    capture.write("abc".getBytes(US_ASCII), 0, 3);

    capture.freeze();
    capture.write("def".getBytes(US_ASCII), 0, 3);

    assertThat(capture.render()).isEqualTo("abc");
    assertThat(capture.droppedBytes()).isZero();
  }

  @Test
  void freeze_afterOverflow_keepsTheTailAsItWas() {
    byte[] bytes = letters(300, 6);
    OutputCapture capture = captureOf(100, bytes);
    String before = capture.render();

    capture.freeze();
    capture.write(letters(500, 7), 0, 500);

    assertThat(capture.render()).isEqualTo(before);
    assertThat(capture.droppedBytes()).isEqualTo(200);
  }

  @Test
  void hugeOutput_keepsAboutTheLimit() {
    int limit = 1024 * 1024;
    long total = 200L * 1024 * 1024;
    byte[] chunk = letters(64 * 1024, 8);
    OutputCapture capture = new OutputCapture(limit);

    for (long written = 0; written < total; written += chunk.length) {
      capture.write(chunk, 0, chunk.length);
    }
    String rendered = capture.render();

    assertThat(capture.droppedBytes()).isEqualTo(total - limit);
    assertThat(rendered.length()).isBetween(limit, limit + 200);
    assertThat(rendered).contains(String.valueOf(total - limit));
  }

  @ParameterizedTest
  @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 1})
  void limitBelowTwoBytes_isRefused(int limit) {
    assertThatThrownBy(() -> new OutputCapture(limit))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("limit must be at least 2 bytes");
  }
}
