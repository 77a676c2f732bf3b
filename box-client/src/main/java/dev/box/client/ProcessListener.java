package dev.box.client;

/**
 * Receives what happens on a {@linkplain BoxClient#attach managed process's stdio relay}: stdout,
 * the exit code, reconnections and the end of the attachment.
 *
 * <p>Every method is a no-op by default; override the ones you need. Calls are made one at a time,
 * never concurrently, in the order the events happened, on a thread of the client's HTTP stack or
 * of the attachment's supervisor: return quickly, since the next stdout frame is read only after
 * the call returns (which is also how a slow listener slows the process down instead of losing
 * output). A listener may call {@link ProcessAttachment#send} and {@link ProcessAttachment#close}.
 * An exception thrown by a listener method ends the attachment with {@link #onFailure}.
 *
 * <p>Exactly one of {@link #onClose} and {@link #onFailure} is called, once, and it is the last
 * call.
 */
public interface ProcessListener {

  /**
   * Called with each complete stdout line, without its {@code \n}, when the attachment delivers
   * {@linkplain AttachOptions.Delivery#LINES lines} (the default). Bytes that are not valid UTF-8
   * become U+FFFD. When stdout ends without a final newline, the rest is delivered as a last line
   * before {@link #onExit}.
   */
  default void onStdoutLine(String line) {}

  /**
   * Called with stdout bytes exactly as the process wrote them when the attachment delivers
   * {@linkplain AttachOptions.Delivery#BYTES bytes}. Chunk boundaries carry no meaning.
   *
   * @param bytes the next bytes of stdout; the listener may keep the array
   * @param offset the stdout byte offset of {@code bytes[0]} (the number of bytes the process wrote
   *     before it), contiguous with the previous call except after {@link #onGap}
   */
  default void onStdout(byte[] bytes, long offset) {}

  /**
   * Called when the process's stdout ended and its exit code is known (128+N when a signal N killed
   * it), after the last stdout and just before {@link #onClose}.
   */
  default void onExit(int exitCode) {}

  /**
   * Called when stdout the attachment should have delivered is no longer buffered by the server, so
   * it is lost to this client; delivery continues at {@code firstAvailable}. A partial line before
   * the gap is dropped.
   *
   * @param requested the offset delivery should have continued at
   * @param firstAvailable the offset it continues at instead
   */
  default void onGap(long requested, long firstAvailable) {}

  /**
   * Called when a new connection replaced one that dropped, and delivery resumes at {@code offset}:
   * right after the byte last delivered, so nothing is lost or repeated, or after a {@link #onGap}
   * at its {@code firstAvailable}. Stdin lines whose sending failed with the old connection are not
   * sent again (the process may have read them).
   */
  default void onReconnect(long offset) {}

  /**
   * Called last when the attachment ends normally: after the server closed the relay (code 1000
   * with the reason {@code exit_code=N} when stdout ended, or another WebSocket close code and
   * reason that reports no error, such as 4410 when reconnecting is off), or when {@link
   * ProcessAttachment#close()} detached this client (code 1000, reason {@code detached}). When the
   * process exited while the connection was down and the server no longer relays it, the exit code
   * comes from the process's record and the call is the same as if the server had closed (code
   * 1000, reason {@code exit_code=N}), after a {@link #onGap} for any stdout lost in flight.
   */
  default void onClose(int code, String reason) {}

  /**
   * Called last when the attachment ends because of a failure it could not recover from: the
   * connection dropped and reconnecting failed (or is disabled), the server ended the relay with an
   * error (the process or its session disappeared, for example: the failure is then the {@link
   * dev.box.api.BoxException} subtype the server raised), or a listener method threw. The process
   * may still be running.
   */
  default void onFailure(Throwable failure) {}
}
