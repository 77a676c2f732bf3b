package dev.box.sandbox.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.sandbox.BackendRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client over a real Unix socket, against an engine that answers one canned byte sequence: what
 * a malformed answer becomes, and that a hijacked stream starts at the first byte after the head.
 * The parsing itself is specified in {@link HttpReaderTest}.
 */
class EngineClientTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  @TempDir Path dir;

  @Test
  void call_readsAnAnswerWithContentLength() throws Exception {
    EngineClient.Response response =
        callAnswering("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"Id\":\"abc\"}\n");

    assertThat(response.status()).isEqualTo(200);
    assertThat(response.json().path("Id").asText()).isEqualTo("abc");
  }

  @Test
  void call_badContentLength_isAnIoException() {
    assertThatThrownBy(() -> callAnswering("HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n{}"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("Content-Length");
  }

  @Test
  void call_badChunkSize_isAnIoException() {
    assertThatThrownBy(
            () ->
                callAnswering(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("chunk size");
  }

  @Test
  void hijack_streamStartsRightAfterTheHead() throws Exception {
    byte[] frame = {1, 0, 0, 0, 0, 0, 0, 3, 'h', 'i', '\n'};
    byte[] head =
        ("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
                + "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] answer = new byte[head.length + frame.length];
    System.arraycopy(head, 0, answer, 0, head.length);
    System.arraycopy(frame, 0, answer, head.length, frame.length);

    try (OneAnswerEngine engine = OneAnswerEngine.start(dir.resolve("engine.sock"), answer)) {
      EngineClient.Hijacked hijacked =
          new EngineClient(engine.socket, BackendRuntime.system())
              .hijack("/exec/x/start", Map.of("Detach", false), TIMEOUT);
      try (InputStream in = hijacked.in();
          SocketChannel channel = hijacked.channel()) {
        assertThat(in.readAllBytes()).isEqualTo(frame);
      }
    }
  }

  private EngineClient.Response callAnswering(String answer) throws Exception {
    try (OneAnswerEngine engine =
        OneAnswerEngine.start(
            dir.resolve("engine.sock"), answer.getBytes(StandardCharsets.ISO_8859_1))) {
      return new EngineClient(engine.socket, BackendRuntime.system())
          .call("GET", "/version", null, TIMEOUT);
    }
  }

  /** Accepts one connection, reads the request head, writes {@code answer} and closes. */
  private static final class OneAnswerEngine implements AutoCloseable {
    private static final Pattern CONTENT_LENGTH =
        Pattern.compile("(?i)\r\ncontent-length: *([0-9]+)\r\n");
    final Path socket;
    private final ServerSocketChannel server;
    private final Thread thread;

    private OneAnswerEngine(Path socket, ServerSocketChannel server, byte[] answer) {
      this.socket = socket;
      this.server = server;
      this.thread = Thread.ofVirtual().start(() -> answerOnce(answer));
    }

    static OneAnswerEngine start(Path socket, byte[] answer) throws IOException {
      ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      server.bind(UnixDomainSocketAddress.of(socket));
      return new OneAnswerEngine(socket, server, answer);
    }

    private void answerOnce(byte[] answer) {
      try (SocketChannel connection = server.accept()) {
        readRequest(Channels.newInputStream(connection));
        connection.write(ByteBuffer.wrap(answer));
      } catch (IOException e) {
        // The test sees what the client made of it.
      }
    }

    /** Reads the head up to the blank line, then the body its Content-Length announces. */
    private static void readRequest(InputStream in) throws IOException {
      StringBuilder head = new StringBuilder();
      while (!head.toString().endsWith("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          throw new IOException("the client closed the connection");
        }
        head.append((char) b);
      }
      Matcher length = CONTENT_LENGTH.matcher(head);
      in.readNBytes(length.find() ? Integer.parseInt(length.group(1)) : 0);
    }

    @Override
    public void close() throws IOException, InterruptedException {
      server.close();
      thread.join();
    }
  }
}
