package dev.box.mcpserver;

import dev.box.agenthost.OutputCut;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * What a process wrote since it was last read, held in bounded memory: the first and the last
 * {@code limit} code points, and a count of those dropped between them, which is all that {@link
 * OutputCut} shows a model of any text. Whatever a sandbox writes, and however fast, costs at most
 * a few times {@code limit} characters here.
 *
 * <p>Bytes are decoded as UTF-8 across chunk boundaries; invalid ones become U+FFFD. Thread-safe:
 * one writer (the attachment's listener) and any number of readers.
 */
final class OutputSpool {
  private final int limit;
  private final CharsetDecoder decoder =
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPLACE)
          .onUnmappableCharacter(CodingErrorAction.REPLACE);
  private final StringBuilder head = new StringBuilder();
  private final StringBuilder tail = new StringBuilder();
  private byte[] partial = new byte[0];
  private int headPoints;
  private int tailPoints;
  private long dropped;
  private boolean ended;
  private @Nullable Integer exitCode;
  private @Nullable String failure;

  /** A spool that keeps enough for a cut to {@code limit} code points. */
  OutputSpool(int limit) {
    this.limit = limit;
  }

  /** What was read: the text cut for a model, and whether the stream has ended and how. */
  record Taken(
      OutputCut output, boolean ended, @Nullable Integer exitCode, @Nullable String failure) {}

  /** Appends bytes of the stream. */
  synchronized void write(byte[] bytes) {
    ByteBuffer in = ByteBuffer.allocate(partial.length + bytes.length);
    in.put(partial).put(bytes).flip();
    CharBuffer out = CharBuffer.allocate(in.remaining() + 1);
    decoder.decode(in, out, false);
    partial = new byte[in.remaining()];
    in.get(partial);
    append(out.flip().toString());
  }

  /** Records that the stream ended with the process's exit, flushing a partial character. */
  synchronized void exited(int code) {
    finish();
    exitCode = code;
  }

  /** Records that following the stream failed: nothing more will arrive. */
  synchronized void failed(String why) {
    if (ended) {
      return; // An exit or a failure was recorded first; the close that follows it says nothing.
    }
    finish();
    failure = why;
  }

  /** Whether the stream ended: nothing more will be written. */
  synchronized boolean ended() {
    return ended;
  }

  /** Takes what was written since the last call, cut to the limit. */
  synchronized Taken take() {
    OutputCut cut = OutputCut.ofEnds(head.toString(), dropped, tail.toString(), limit);
    head.setLength(0);
    tail.setLength(0);
    headPoints = 0;
    tailPoints = 0;
    dropped = 0;
    return new Taken(cut, ended, exitCode, failure);
  }

  private void finish() {
    if (ended) {
      return;
    }
    ended = true;
    ByteBuffer in = ByteBuffer.wrap(partial);
    CharBuffer out = CharBuffer.allocate(partial.length + 2);
    decoder.decode(in, out, true);
    decoder.flush(out);
    partial = new byte[0];
    append(out.flip().toString());
  }

  private void append(String text) {
    int i = 0;
    while (i < text.length() && headPoints < limit) {
      int point = text.codePointAt(i);
      head.appendCodePoint(point);
      headPoints++;
      i += Character.charCount(point);
    }
    if (i == text.length()) {
      return;
    }
    String rest = text.substring(i);
    tail.append(rest);
    tailPoints += rest.codePointCount(0, rest.length());
    // Trimmed in batches so that a stream of small writes costs linear time, not quadratic.
    if (tailPoints > 2 * limit) {
      int excess = tailPoints - limit;
      tail.delete(0, tail.offsetByCodePoints(0, excess));
      tailPoints = limit;
      dropped += excess;
    }
  }
}
