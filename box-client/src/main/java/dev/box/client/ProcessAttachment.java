package dev.box.client;

import java.util.concurrent.CompletableFuture;

/**
 * A client attached to a managed process's stdio: what it sends goes to the process's stdin, and
 * what the process writes to stdout goes to the {@link ProcessListener} it was attached with.
 *
 * <p>Sends are queued and written in the order they were made, on one connection at a time; while
 * the attachment reconnects they wait for the new connection. Each returns a future that completes
 * when its frame was written to the connection, or fails when the attachment has ended or when the
 * connection dropped while the frame was being written (such a frame is not sent again, since the
 * process may have read it). Thread-safe.
 */
public interface ProcessAttachment extends AutoCloseable {

  /** The session of the process. */
  String sessionId();

  /** The id of the process within its session. */
  String processId();

  /**
   * Writes {@code line} and a {@code \n} to the process's stdin.
   *
   * @throws IllegalArgumentException when {@code line} contains {@code \n} or {@code \r} (send
   *     several lines with several calls, or bytes with {@link #sendBytes})
   */
  CompletableFuture<Void> send(String line);

  /**
   * Writes {@code bytes} to the process's stdin exactly as they are; an empty array writes nothing.
   */
  CompletableFuture<Void> sendBytes(byte[] bytes);

  /**
   * Closes the process's stdin once the sends before this one are written, as a process reading to
   * the end of its input expects.
   */
  CompletableFuture<Void> closeStdin();

  /**
   * The stdout offset after the last byte delivered to the listener, or -1 before the server said
   * where delivery starts.
   */
  long offset();

  /**
   * Detaches this client: writes the queued sends (waiting at most the client's request timeout),
   * closes the connection and ends the attachment with {@link ProcessListener#onClose onClose(1000,
   * "detached")}. The process keeps running, and the next attachment continues where this one's
   * delivery ended. Does nothing when the attachment has already ended.
   */
  @Override
  void close();
}
