package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The answer to one server-streaming Connect call: status 200 and {@code application/connect+json}
 * or {@code +proto}, then one envelope per message ({@code [flags][uint32 length][message]}), each
 * flushed at once, and always a last end-stream envelope, in JSON whatever the codec, {@code {}} or
 * {@code {"error":{"code","message"}}}: E2B's SDK reads a failed stream's error there, never from
 * its HTTP status. Thread-safe; nothing is written after the end.
 */
final class ConnectStream {
  private static final int END_STREAM = 0x02;
  private static final int COMPRESSED = 0x01;

  private final Context ctx;
  private final ObjectMapper mapper;
  private final EnvdCodec codec;
  private @Nullable OutputStream body;
  private boolean ended;

  /** The answer to {@code ctx}, its messages in {@code codec}, its end message in JSON. */
  ConnectStream(Context ctx, ObjectMapper mapper, EnvdCodec codec) {
    this.ctx = ctx;
    this.mapper = mapper;
    this.codec = codec;
  }

  /**
   * The one request message of the call, as JSON: a single uncompressed envelope holding a message
   * in the stream's codec, within {@link Bodies#MAX_JSON_BYTES}.
   *
   * @throws ConnectError {@code invalid_argument} for anything else
   */
  JsonNode request() throws IOException {
    byte[] bytes = Bodies.bytes(ctx);
    if (bytes.length < 5) {
      throw ConnectError.invalidArgument("the request must be one Connect envelope");
    }
    ByteBuffer envelope = ByteBuffer.wrap(bytes);
    int flags = envelope.get() & 0xff;
    long length = envelope.getInt() & 0xffffffffL;
    if ((flags & COMPRESSED) != 0) {
      throw ConnectError.invalidArgument("compressed messages are not served");
    }
    if (length != envelope.remaining()) {
      throw ConnectError.invalidArgument("the request must be exactly one Connect envelope");
    }
    return codec.decode(bytes, 5, (int) length);
  }

  /**
   * The next request message of a client stream, as JSON, read from the body as it comes; null at
   * its end. Each message is bounded by {@link Bodies#MAX_JSON_BYTES}, their number is not.
   *
   * @throws ConnectError {@code invalid_argument} for a cut, compressed or oversized envelope
   */
  @Nullable JsonNode next() throws IOException {
    InputStream in = ctx.req().getInputStream();
    byte[] head = in.readNBytes(5);
    if (head.length == 0) {
      return null;
    }
    ByteBuffer envelope = ByteBuffer.wrap(head);
    int flags = envelope.get() & 0xff;
    long length = envelope.getInt() & 0xffffffffL;
    if (head.length < 5 || (flags & COMPRESSED) != 0 || length > Bodies.MAX_JSON_BYTES) {
      throw ConnectError.invalidArgument(
          "each message must be one uncompressed Connect envelope of at most "
              + Bodies.MAX_JSON_BYTES
              + " bytes");
    }
    byte[] message = in.readNBytes((int) length);
    if (message.length < length) {
      throw ConnectError.invalidArgument("the last Connect envelope was cut short");
    }
    return codec.decode(message, 0, message.length);
  }

  /** Sends {@code message}; the first one sends the status and headers too. */
  synchronized void send(ObjectNode message) throws IOException {
    if (!ended) {
      write(0, codec.encode(message));
    }
  }

  /** Ends the stream, with {@code error} when it failed; later calls do nothing. */
  synchronized void end(@Nullable ConnectError error) throws IOException {
    if (ended) {
      return;
    }
    ObjectNode end = mapper.createObjectNode();
    if (error != null) {
      ObjectNode fields = end.putObject("error");
      fields.put("code", error.code());
      fields.put("message", error.getMessage());
    }
    write(END_STREAM, mapper.writeValueAsBytes(end));
    ended = true;
  }

  /**
   * Writes one envelope and flushes it.
   *
   * @throws Gone when the client is gone
   */
  private void write(int flags, byte[] payload) throws Gone {
    try {
      OutputStream out = body;
      if (out == null) {
        ctx.status(200);
        ctx.contentType("application/connect+" + codec.name());
        // A proxy that buffers would hold the messages back.
        ctx.header("Cache-Control", "no-store");
        ctx.header("X-Accel-Buffering", "no");
        out = ctx.res().getOutputStream();
        body = out;
      }
      out.write(ByteBuffer.allocate(5).put((byte) flags).putInt(payload.length).array());
      out.write(payload);
      out.flush();
    } catch (IOException e) {
      throw new Gone(e);
    }
  }

  /** The client of a stream went away: nothing more can be sent to it. */
  static final class Gone extends IOException {
    private static final long serialVersionUID = 1L;

    Gone(IOException cause) {
      super("the client went away: " + cause, cause);
    }
  }
}
