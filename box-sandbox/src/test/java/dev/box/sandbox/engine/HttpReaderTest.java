package dev.box.sandbox.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** How an answer of the engine is read from its bytes, well-formed or not. */
class HttpReaderTest {

  @Test
  void contentLength_readsExactlyTheBody() throws IOException {
    HttpReader reader =
        reader("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}X");

    HttpReader.Head head = reader.readHead();

    assertThat(head).isEqualTo(new HttpReader.Head(200, 2, false));
    assertThat(text(reader.readBody(head))).isEqualTo("{}");
    assertThat(text(reader.stream().readAllBytes())).isEqualTo("X");
  }

  @Test
  void chunked_joinsTheChunksAndSkipsTheTrailers() throws IOException {
    HttpReader reader =
        reader(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\nA\r\n, engine!!\r\n0\r\nX-Trailer: t\r\n\r\nX");

    HttpReader.Head head = reader.readHead();

    assertThat(head.chunked()).isTrue();
    assertThat(text(reader.readBody(head))).isEqualTo("hello, engine!!");
    assertThat(text(reader.stream().readAllBytes())).isEqualTo("X");
  }

  static Stream<Arguments> bodies() {
    return Stream.of(
        Arguments.of(
            "chunk extensions are ignored",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "3;name=value\r\nabc\r\n2 ; x\r\nde\r\n0;last\r\n\r\n",
            "abcde"),
        Arguments.of(
            "chunked wins over Content-Length",
            "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "2\r\nok\r\n0\r\n\r\n",
            "ok"),
        Arguments.of(
            "no length: the body runs to the end of the connection",
            "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nall of it",
            "all of it"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bodies")
  void body_isReadAsTheHeadSays(String name, String answer, String body) throws IOException {
    HttpReader reader = reader(answer);

    assertThat(text(reader.readBody(reader.readHead()))).isEqualTo(body);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bodies")
  void bodyStream_readsTheSameBodyAsItArrives(String name, String answer, String body)
      throws IOException {
    HttpReader reader = reader(answer);

    assertThat(text(reader.bodyStream(reader.readHead()).readAllBytes())).isEqualTo(body);
  }

  @Test
  void bodyStream_hasNoBoundOfItsOwnAndStopsAtTheBodysEnd() throws IOException {
    String big = "x".repeat(100_000);
    HttpReader reader =
        reader(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(big.length())
                + "\r\n"
                + big
                + "\r\n1\r\n!\r\n0\r\n\r\nX");

    assertThat(text(reader.bodyStream(reader.readHead()).readAllBytes())).isEqualTo(big + "!");
    assertThat(text(reader.stream().readAllBytes())).isEqualTo("X");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\nabc",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"
      })
  void bodyStream_cutShort_isAnIoException(String answer) throws IOException {
    HttpReader reader = reader(answer);
    InputStream body = reader.bodyStream(reader.readHead());

    assertThatThrownBy(body::readAllBytes).isInstanceOf(IOException.class);
  }

  @Test
  void noContent_hasNoBody() throws IOException {
    HttpReader reader = reader("HTTP/1.1 204 No Content\r\n\r\nX");

    assertThat(reader.readBody(reader.readHead())).isEmpty();
    assertThat(text(reader.stream().readAllBytes())).isEqualTo("X");
  }

  @Test
  void statusLineWithoutReason_isRead() throws IOException {
    assertThat(reader("HTTP/1.1 404\r\n\r\n").readHead().status()).isEqualTo(404);
  }

  @Test
  void upgradedAnswer_streamGoesOnWithTheBytesBufferedAfterTheHead() throws IOException {
    byte[] frames = {1, 0, 0, 0, 0, 0, 0, 2, 'o', 'k', 2, 0, 0, 0, 0, 0, 0, 1, '!'};
    InputStream source =
        concat(
            bytes("HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n"), frames);
    HttpReader reader = new HttpReader(source);

    assertThat(reader.readHead().status()).isEqualTo(101);
    assertThat(reader.stream().readAllBytes()).isEqualTo(frames);
  }

  @Test
  void head_isReadThroughTheBufferNotByteByByte() throws IOException {
    StringBuilder answer = new StringBuilder("HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 40; i++) {
      answer.append("X-Header-").append(i).append(": some value\r\n");
    }
    answer.append("Content-Length: 2\r\n\r\n{}");
    CountingStream source = new CountingStream(bytes(answer.toString()));
    HttpReader reader = new HttpReader(source);

    reader.readBody(reader.readHead());

    assertThat(answer.length()).isGreaterThan(800);
    assertThat(source.reads).isLessThanOrEqualTo(3);
  }

  static Stream<Arguments> malformed() {
    return Stream.of(
        Arguments.of("not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\n", "not an HTTP answer"),
        Arguments.of("status not a number", "HTTP/1.1 2x0 OK\r\n\r\n", "not an HTTP answer"),
        Arguments.of("status with sign", "HTTP/1.1 -20 OK\r\n\r\n", "not an HTTP answer"),
        Arguments.of("status of four digits", "HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP answer"),
        Arguments.of("status missing", "HTTP/1.1\r\n\r\n", "not an HTTP answer"),
        Arguments.of("empty answer", "", "closed the connection before the end of a status line"),
        Arguments.of(
            "head cut short", "HTTP/1.1 200 OK\r\nContent-Le", "before the end of a header line"),
        Arguments.of(
            "header without colon", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed"),
        Arguments.of(
            "header line too long",
            "HTTP/1.1 200 OK\r\nX: " + "a".repeat(HttpReader.MAX_LINE_BYTES) + "\r\n\r\n",
            "header line of the engine's answer is longer than 8192 bytes"),
        Arguments.of(
            "status line too long",
            "HTTP/1.1 200 " + "a".repeat(HttpReader.MAX_LINE_BYTES) + "\r\n\r\n",
            "status line of the engine's answer is longer than 8192 bytes"),
        Arguments.of(
            "too many headers",
            "HTTP/1.1 200 OK\r\n" + "X: y\r\n".repeat(HttpReader.MAX_HEADER_LINES + 1) + "\r\n",
            "more than 100 header lines"),
        Arguments.of(
            "Content-Length not a number",
            "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n{}",
            "invalid Content-Length: 12x"),
        Arguments.of(
            "Content-Length negative",
            "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n{}",
            "invalid Content-Length: -5"),
        Arguments.of(
            "Content-Length empty",
            "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n{}",
            "invalid Content-Length"),
        Arguments.of(
            "Content-Length overflowing a long",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n{}",
            "Content-Length out of range"),
        Arguments.of(
            "Content-Length above the body bound",
            "HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n{}",
            "too large"),
        Arguments.of(
            "Content-Length twice, differing",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "two different Content-Length headers"),
        Arguments.of(
            "body shorter than Content-Length",
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
            "in the middle of an answer"),
        Arguments.of("chunk size not hex", chunked("zz\r\n{}\r\n0\r\n\r\n"), "invalid chunk size"),
        Arguments.of("chunk size negative", chunked("-5\r\n{}\r\n0\r\n\r\n"), "invalid chunk size"),
        Arguments.of("chunk size empty", chunked("\r\n{}\r\n0\r\n\r\n"), "invalid chunk size"),
        Arguments.of(
            "chunk size overflowing a long",
            chunked("10000000000000000\r\n{}\r\n0\r\n\r\n"),
            "chunk size out of range"),
        Arguments.of(
            "chunk above the body bound", chunked("7fffffff\r\n{}\r\n0\r\n\r\n"), "too large"),
        Arguments.of(
            "chunk without CRLF after it",
            chunked("3\r\nabcX\r\n0\r\n\r\n"),
            "does not end with CRLF"),
        Arguments.of("chunk data cut short", chunked("a\r\nabc"), "in the middle of an answer"),
        Arguments.of(
            "chunked body cut before its last chunk",
            chunked("3\r\nabc\r\n"),
            "before the end of a chunk size line"),
        Arguments.of(
            "chunked body cut in the CRLF after a chunk",
            chunked("3\r\nabc\r"),
            "in the middle of an answer"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void malformedAnswer_isAnIoExceptionSayingWhatIsWrong(
      String name, String answer, String message) {
    HttpReader reader = reader(answer);

    assertThatThrownBy(() -> reader.readBody(reader.readHead()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(message);
  }

  @Test
  void messages_quoteAShortenedPrintableForm() {
    HttpReader reader =
        reader("HTTP/1.1 200 OK\r\nContent-Length: \u0001" + "9".repeat(200) + "\r\n\r\n");

    assertThatThrownBy(reader::readHead)
        .hasMessageEndingWith("invalid Content-Length: ?" + "9".repeat(99) + "...");
  }

  private static String chunked(String body) {
    return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body;
  }

  private static HttpReader reader(String answer) {
    return new HttpReader(new ByteArrayInputStream(bytes(answer)));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.ISO_8859_1);
  }

  private static InputStream concat(byte[] first, byte[] second) {
    byte[] all = new byte[first.length + second.length];
    System.arraycopy(first, 0, all, 0, first.length);
    System.arraycopy(second, 0, all, first.length, second.length);
    return new ByteArrayInputStream(all);
  }

  /** Counts the calls that reach the source, as reads from a socket would be system calls. */
  private static final class CountingStream extends InputStream {
    private final ByteArrayInputStream source;
    int reads;

    CountingStream(byte[] bytes) {
      this.source = new ByteArrayInputStream(bytes);
    }

    @Override
    public int read() {
      reads++;
      return source.read();
    }

    @Override
    public int read(byte[] buffer, int offset, int length) {
      reads++;
      return source.read(buffer, offset, length);
    }
  }
}
