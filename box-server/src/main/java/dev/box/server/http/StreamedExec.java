package dev.box.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxError;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxSpec;
import dev.box.core.exec.ExecListener;
import dev.box.core.session.SessionManager;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * An exec answered as it runs ({@code Accept: application/x-ndjson}): one JSON object per line,
 * {@code {"type":"stdout","data":...}} and {@code {"type":"stderr","data":...}} as the command
 * writes (each line flushed at once), then exactly one {@code {"type":"result",...}} with the
 * fields of the exec's result but its output, which came before. The status and headers go out when
 * the command has started: what fails before that is an ordinary JSON error with its status; what
 * fails after it (the sandbox ended under the command) is a last line {@code {"type":"error",
 * "error":{...}}}. A client that goes away ends the command and its tree: at the next write, or
 * within a poll of {@link ClientDisconnects} while the command is silent.
 *
 * <p>Output is decoded as UTF-8 across the chunks of a stream (a character split between two chunks
 * is whole in the line of the second; what is not UTF-8 becomes U+FFFD), and each stream carries at
 * most {@code max_output_bytes}, as the result keeps.
 */
final class StreamedExec implements ExecListener {
  static final String NDJSON = "application/x-ndjson";

  private final HttpServletResponse response;
  private final ObjectMapper mapper;
  private final ClientDisconnects disconnects;
  private final ClientDisconnects.@Nullable Connection connection;
  private ClientDisconnects.@Nullable Watch watch;
  private final Utf8 stdout = new Utf8();
  private final Utf8 stderr = new Utf8();
  private @Nullable OutputStream body;
  private boolean finished;

  private StreamedExec(
      HttpServletRequest request,
      HttpServletResponse response,
      ObjectMapper mapper,
      ClientDisconnects disconnects) {
    this.response = response;
    this.mapper = mapper;
    this.disconnects = disconnects;
    this.connection = ClientDisconnects.Connection.of(request);
  }

  /** Whether {@code accept} asks for a streamed exec: it names {@value #NDJSON}. */
  static boolean wanted(@Nullable String accept) {
    if (accept == null) {
      return false;
    }
    for (String range : accept.split(",")) {
      String type = range.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
      if (type.equals(NDJSON)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs {@code spec} in {@code sessions} and answers on {@code response} as it runs; a client that
   * closes the connection of {@code request} ends the command, also while it writes nothing.
   *
   * @throws RuntimeException when the exec fails before its command started: nothing was sent yet,
   *     and the error is answered as any
   */
  static void run(
      HttpServletRequest request,
      HttpServletResponse response,
      ObjectMapper mapper,
      ClientDisconnects disconnects,
      SessionManager sessions,
      BoxSpec spec)
      throws IOException {
    StreamedExec stream = new StreamedExec(request, response, mapper, disconnects);
    BoxExecutionResult result;
    try {
      result = sessions.exec(spec, stream);
    } catch (RuntimeException e) {
      if (!stream.began()) {
        throw e;
      }
      stream.error(ErrorMapper.toBoxException(e));
      return;
    } finally {
      stream.unwatch();
    }
    stream.result(result);
  }

  @Override
  public synchronized void started(Runnable end) {
    if (connection != null) {
      watch = disconnects.watch(connection, end);
    }
    response.setStatus(200);
    response.setContentType(NDJSON);
    // A proxy that buffers would hold the lines back.
    response.setHeader("Cache-Control", "no-store");
    response.setHeader("X-Accel-Buffering", "no");
    try {
      body = response.getOutputStream();
      response.flushBuffer();
    } catch (IOException e) {
      // The client is gone: the first output says so, and that ends the command.
    }
  }

  private synchronized void unwatch() {
    if (watch != null) {
      watch.close();
    }
  }

  private synchronized boolean began() {
    return body != null;
  }

  @Override
  public void output(boolean isStderr, byte[] bytes, int length) throws IOException {
    Utf8 decoder = isStderr ? stderr : stdout;
    String text;
    synchronized (decoder) {
      text = decoder.decode(bytes, length, false);
    }
    if (!text.isEmpty()) {
      line(isStderr ? "stderr" : "stdout", text);
    }
  }

  private void line(String type, String data) throws IOException {
    ObjectNode line = mapper.createObjectNode();
    line.put("type", type);
    line.put("data", data);
    write(line);
  }

  /** The last line: the result, after what is left of a character cut at a stream's end. */
  private void result(BoxExecutionResult result) throws IOException {
    for (boolean isStderr : new boolean[] {false, true}) {
      Utf8 decoder = isStderr ? stderr : stdout;
      String rest;
      synchronized (decoder) {
        rest = decoder.decode(new byte[0], 0, true);
      }
      if (!rest.isEmpty()) {
        line(isStderr ? "stderr" : "stdout", rest);
      }
    }
    ObjectNode line = mapper.createObjectNode();
    line.put("type", "result");
    ObjectNode fields = mapper.valueToTree(result);
    fields.remove("stdout");
    fields.remove("stderr");
    line.setAll(fields);
    finish(line);
  }

  private void error(BoxException e) throws IOException {
    ObjectNode line = mapper.createObjectNode();
    line.put("type", "error");
    line.setAll((ObjectNode) mapper.valueToTree(BoxError.of(e)));
    finish(line);
  }

  private synchronized void write(ObjectNode line) throws IOException {
    OutputStream out = body;
    if (finished || out == null) {
      // After the result, a background process's output is not the exec's any more.
      return;
    }
    out.write(mapper.writeValueAsBytes(line));
    out.write('\n');
    out.flush();
  }

  private void finish(ObjectNode line) throws IOException {
    write(line);
    synchronized (this) {
      finished = true;
    }
  }

  /** A UTF-8 decoder that carries a character cut between two chunks over to the next. */
  private static final class Utf8 {
    private final CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    private final ByteBuffer carried = ByteBuffer.allocate(8);

    String decode(byte[] bytes, int length, boolean end) {
      ByteBuffer in = ByteBuffer.allocate(carried.position() + length);
      in.put(carried.flip()).put(bytes, 0, length).flip();
      carried.clear();
      CharBuffer out = CharBuffer.allocate(in.remaining() + 1);
      decoder.decode(in, out, end);
      if (end) {
        decoder.flush(out);
        decoder.reset();
      }
      carried.put(in);
      return out.flip().toString();
    }
  }
}
