package dev.box.bench;

import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Reads a managed process's stdout from the relay to the close and counts it, keeping nothing. In
 * raw mode stdout is the BINARY messages after the start frame; in line mode each TEXT message is a
 * line, counted with the newline the relay removed. Requests one message at a time, as a client
 * that keeps up with its consumer would.
 *
 * <p>The JDK calls a listener's methods one after another, so the counters need no lock; {@link
 * #result()} publishes them.
 */
final class RelayDrain implements WebSocket.Listener {
  /** The first frame of raw mode when nothing was delivered before. */
  static final String RAW_START = "{\"type\":\"start\",\"offset\":0}";

  /**
   * What arrived, ending with the close.
   *
   * @param bytes the stdout bytes
   * @param messages the messages carrying them (lines in line mode)
   * @param firstFrameNanos {@link System#nanoTime()} at the first frame, the start frame included
   * @param closeNanos {@link System#nanoTime()} at the close
   * @param closeCode the close code
   * @param closeReason the close reason ({@code exit_code=N} when the process exited)
   */
  record Result(
      long bytes,
      long messages,
      long firstFrameNanos,
      long closeNanos,
      int closeCode,
      String closeReason) {

    /** From the first frame to the close. */
    double seconds() {
      return (closeNanos - firstFrameNanos) / 1e9;
    }
  }

  private final boolean raw;
  private final CompletableFuture<Result> result = new CompletableFuture<>();
  private final StringBuilder control = new StringBuilder();
  private long firstFrameNanos;
  private boolean started;
  private long bytes;
  private long messages;

  /** A drain for the raw mode ({@code ?mode=raw}) or the line mode. */
  RelayDrain(boolean raw) {
    this.raw = raw;
  }

  /** Completes at the close; fails on a socket error or an unexpected frame. */
  CompletableFuture<Result> result() {
    return result;
  }

  @Override
  public void onOpen(WebSocket socket) {
    socket.request(1);
  }

  @Override
  public @Nullable CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
    frameArrived();
    if (raw) {
      control.append(data);
      if (last && !control.toString().equals(RAW_START)) {
        fail(socket, "expected the start frame " + RAW_START + ", got " + control);
      }
    } else {
      bytes += utf8Length(data) + (last ? 1 : 0);
      messages += last ? 1 : 0;
    }
    socket.request(1);
    return null;
  }

  @Override
  public @Nullable CompletionStage<?> onBinary(WebSocket socket, ByteBuffer data, boolean last) {
    frameArrived();
    if (!raw) {
      fail(socket, "line mode sent a binary frame");
    }
    bytes += data.remaining();
    messages += last ? 1 : 0;
    socket.request(1);
    return null;
  }

  @Override
  public @Nullable CompletionStage<?> onClose(WebSocket socket, int code, String reason) {
    result.complete(new Result(bytes, messages, firstFrameNanos, System.nanoTime(), code, reason));
    return null;
  }

  @Override
  public void onError(WebSocket socket, Throwable error) {
    result.completeExceptionally(error);
  }

  private void frameArrived() {
    if (!started) {
      started = true;
      firstFrameNanos = System.nanoTime();
    }
  }

  private void fail(WebSocket socket, String why) {
    result.completeExceptionally(new IllegalStateException(why));
    socket.abort();
  }

  /** The UTF-8 length of {@code text}; each half of a surrogate pair counts 2 of its 4 bytes. */
  private static long utf8Length(CharSequence text) {
    long length = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      length += c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
    }
    return length;
  }
}
