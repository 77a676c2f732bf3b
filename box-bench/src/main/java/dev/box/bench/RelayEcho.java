package dev.box.bench;

import java.io.IOException;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * A client attached in line mode to the stdio relay of a process that echoes its input, such as
 * {@code cat}: {@link #echo} sends one TEXT frame and waits for the next whole TEXT frame back. Not
 * thread-safe: one round trip at a time.
 */
final class RelayEcho implements AutoCloseable {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final WebSocket socket;
  private final Receiver receiver;

  private RelayEcho(WebSocket socket, Receiver receiver) {
    this.socket = socket;
    this.receiver = receiver;
  }

  /** Attaches to the relay of the managed process {@code processId} in the session {@code id}. */
  static RelayEcho attach(BenchClient client, String id, String processId)
      throws IOException, InterruptedException {
    Receiver receiver = new Receiver();
    return new RelayEcho(client.relay(id, processId, "", receiver), receiver);
  }

  /**
   * Sends {@code line} as one TEXT frame and returns the next TEXT frame received.
   *
   * @throws IllegalStateException when the socket closes or nothing comes within 10 s
   */
  String echo(String line) throws IOException, InterruptedException {
    await(socket.sendText(line, true), "sending a frame");
    Received received = receiver.messages.poll(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    return switch (received) {
      case Text(String text) -> text;
      case Other(String what) -> throw new IllegalStateException("expected a text frame: " + what);
      case null -> throw new IllegalStateException("no frame back within " + TIMEOUT);
    };
  }

  /** Closes the socket and waits for the server's close; the process keeps running. */
  @Override
  public void close() throws IOException, InterruptedException {
    try {
      if (!socket.isOutputClosed()) {
        await(socket.sendClose(WebSocket.NORMAL_CLOSURE, "done"), "closing");
      }
      await(receiver.closed, "waiting for the server's close");
    } finally {
      socket.abort();
    }
  }

  private static void await(CompletableFuture<?> future, String what)
      throws IOException, InterruptedException {
    try {
      future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IOException(what + " failed: " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new IllegalStateException(what + " took longer than " + TIMEOUT, e);
    }
  }

  /** What the receiver queues. */
  private sealed interface Received {}

  /** A whole TEXT message. */
  private record Text(String text) implements Received {}

  /** Anything else: the close, an error, a BINARY message (line mode never sends one). */
  private record Other(String description) implements Received {}

  /** Queues what arrives, with each TEXT message joined from its parts; one message at a time. */
  private static final class Receiver implements WebSocket.Listener {
    final BlockingQueue<Received> messages = new LinkedBlockingQueue<>();

    final CompletableFuture<String> closed = new CompletableFuture<>();
    private final StringBuilder text = new StringBuilder();

    @Override
    public void onOpen(WebSocket socket) {
      socket.request(1);
    }

    @Override
    public @Nullable CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        messages.add(new Text(text.toString()));
        text.setLength(0);
      }
      socket.request(1);
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onBinary(WebSocket socket, ByteBuffer data, boolean last) {
      messages.add(new Other("a binary frame"));
      socket.request(1);
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onClose(WebSocket socket, int code, String reason) {
      String close = "close " + code + " " + reason;
      messages.add(new Other(close));
      closed.complete(close);
      return null;
    }

    @Override
    public void onError(WebSocket socket, Throwable error) {
      messages.add(new Other("error " + error));
      closed.completeExceptionally(error);
    }
  }
}
