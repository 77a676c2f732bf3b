package dev.box.backend.e2b;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * Connect's envelope framing for streaming RPCs: each message is preceded by one flags byte and a
 * four-byte big-endian length. Flag {@link #END_STREAM} marks the last message of a server stream,
 * a JSON object that carries the RPC's error, if any, and its trailers.
 *
 * @param flags the flags byte
 * @param payload the message
 */
record ConnectEnvelope(int flags, byte[] payload) {
  /** Set on the end-of-stream message. */
  static final int END_STREAM = 0x02;

  /** Set on a compressed message; Box never asks for compression, so it refuses one. */
  static final int COMPRESSED = 0x01;

  /** The envelope of {@code payload} with {@code flags}, ready to write. */
  static byte[] frame(int flags, byte[] payload) {
    return ByteBuffer.allocate(5 + payload.length)
        .put((byte) flags)
        .putInt(payload.length)
        .put(payload)
        .array();
  }

  /**
   * Reads the next envelope, or null when the stream ends cleanly before one.
   *
   * @throws IOException when the stream ends inside an envelope, or one declares more than {@code
   *     maxBytes} or is compressed
   */
  static @Nullable ConnectEnvelope read(InputStream in, int maxBytes) throws IOException {
    byte[] header = in.readNBytes(5);
    if (header.length == 0) {
      return null;
    }
    if (header.length < 5) {
      throw new EOFException("the stream ended inside an envelope header");
    }
    int flags = header[0] & 0xff;
    long length = ByteBuffer.wrap(header, 1, 4).getInt() & 0xffffffffL;
    if ((flags & COMPRESSED) != 0) {
      throw new IOException("a compressed message, which was not asked for");
    }
    if (length > maxBytes) {
      throw new IOException("a message of " + length + " bytes, more than " + maxBytes);
    }
    byte[] payload = in.readNBytes((int) length);
    if (payload.length < length) {
      throw new EOFException("the stream ended inside a message");
    }
    return new ConnectEnvelope(flags, payload);
  }
}
