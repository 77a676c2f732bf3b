package dev.box.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Hands stdout chunks to a listener, as they are or split into lines. Not thread-safe: the
 * attachment calls it under its dispatch lock.
 */
final class StdoutDecoder {
  private final ProcessListener listener;
  private final boolean lines;
  private final int maxLineBytes;
  private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

  StdoutDecoder(ProcessListener listener, AttachOptions options) {
    this.listener = listener;
    this.lines = options.delivery() == AttachOptions.Delivery.LINES;
    this.maxLineBytes = options.maxLineBytes();
  }

  /**
   * Delivers {@code chunk}, which starts at stdout offset {@code offset}.
   *
   * @throws IOException when a line grows longer than the limit
   */
  void accept(byte[] chunk, long offset) throws IOException {
    if (!lines) {
      listener.onStdout(chunk, offset);
      return;
    }
    int lineStart = 0;
    for (int i = 0; i < chunk.length; i++) {
      if (chunk[i] == '\n') {
        partial.write(chunk, lineStart, i - lineStart);
        emitLine();
        lineStart = i + 1;
      }
    }
    partial.write(chunk, lineStart, chunk.length - lineStart);
    if (partial.size() > maxLineBytes) {
      throw new IOException(
          "a stdout line is longer than the "
              + maxLineBytes
              + "-byte limit; attach with a larger AttachOptions.maxLineBytes or with BYTES delivery");
    }
  }

  /** Stdout ended: delivers the rest of an unterminated last line. */
  void finish() {
    if (partial.size() > 0) {
      emitLine();
    }
  }

  /** Bytes are missing after what was received: forgets the partial line. */
  void reset() {
    partial.reset();
  }

  private void emitLine() {
    String line = partial.toString(StandardCharsets.UTF_8);
    partial.reset();
    listener.onStdoutLine(line);
  }
}
