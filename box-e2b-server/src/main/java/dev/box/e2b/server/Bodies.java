package dev.box.e2b.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;

/** The JSON bodies of E2B's requests, read up to a bound. */
final class Bodies {
  /** The largest JSON body read: E2B's requests are small (metadata and paths). */
  static final int MAX_JSON_BYTES = 256 * 1024;

  /** The most of a refused body read before the answer, so that the answer arrives. */
  private static final long MAX_DRAINED_BYTES = 4L * 1024 * 1024;

  private Bodies() {}

  /**
   * The body of {@code ctx}, an empty object when there is none.
   *
   * @throws TooLarge when it is longer than {@link #MAX_JSON_BYTES}
   * @throws JsonProcessingException when it is not JSON
   */
  static JsonNode json(Context ctx, ObjectMapper mapper) throws IOException {
    byte[] bytes = bytes(ctx);
    if (bytes.length == 0) {
      return mapper.createObjectNode();
    }
    JsonNode node = mapper.readTree(bytes);
    return node == null ? mapper.createObjectNode() : node;
  }

  /**
   * The body of {@code ctx}.
   *
   * @throws TooLarge when it is longer than {@link #MAX_JSON_BYTES}
   */
  static byte[] bytes(Context ctx) throws IOException {
    try (InputStream in = ctx.req().getInputStream()) {
      if (ctx.req().getContentLengthLong() > MAX_JSON_BYTES) {
        drain(in);
        throw new TooLarge();
      }
      byte[] bytes = in.readNBytes(MAX_JSON_BYTES + 1);
      if (bytes.length > MAX_JSON_BYTES) {
        drain(in);
        throw new TooLarge();
      }
      return bytes;
    }
  }

  /**
   * Reads and drops what is left of a refused body, up to {@link #MAX_DRAINED_BYTES}: a server that
   * closes a connection with unread bytes resets it, and the client may then lose the answer.
   */
  private static void drain(InputStream in) throws IOException {
    byte[] buffer = new byte[64 * 1024];
    long left = MAX_DRAINED_BYTES;
    for (int n = 0; left > 0 && n >= 0; left -= n) {
      n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
    }
  }

  /** A body beyond {@link #MAX_JSON_BYTES}. */
  static final class TooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    TooLarge() {
      super("the request body is larger than " + MAX_JSON_BYTES + " bytes");
    }
  }
}
