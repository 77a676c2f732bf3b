package dev.box.client;

import dev.box.api.BoxException;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.internal.RelayProtocol;
import dev.box.api.internal.TerminalProtocol;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A terminal in a session's sandbox ({@link BoxClient#terminal}): a login shell on a real
 * pseudo-terminal, its output passed to a {@link TerminalOutput}, its input and size set from here.
 * Closing it kills the shell and everything it started.
 *
 * <p>Thread-safe: writes and resizes from several threads go out one after the other.
 */
public final class Terminal implements AutoCloseable {
  private final CompletableFuture<Integer> exit;
  private final Listener listener;
  private final WebSocket socket;

  private Terminal(CompletableFuture<Integer> exit, Listener listener, WebSocket socket) {
    this.exit = exit;
    this.listener = listener;
    this.socket = socket;
  }

  /** Opens the terminal at {@code path}, returning once the server started its shell. */
  static Terminal open(ServerHttp http, String path, TerminalOutput output) {
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    Listener listener = new Listener(output, exit);
    return new Terminal(exit, listener, http.openWebSocket(path, listener));
  }

  /**
   * Sends keys to the terminal, returning once they are sent.
   *
   * @throws BoxRuntimeUnavailableException when the connection has ended
   */
  public synchronized void write(byte[] keys) {
    await(socket.sendBinary(ByteBuffer.wrap(keys.clone()), true));
  }

  /**
   * Sets the terminal's size; the shell and its foreground processes hear of it (SIGWINCH).
   *
   * @param cols its width in characters, 1 to 1000
   * @param rows its height in characters, 1 to 1000
   * @throws BoxRuntimeUnavailableException when the connection has ended
   */
  public synchronized void resize(int cols, int rows) {
    await(
        socket.sendText(TerminalProtocol.resizeFrame(new TerminalProtocol.Size(cols, rows)), true));
  }

  /**
   * Completes with the shell's exit code once it has exited and all its output was passed on;
   * exceptionally with a {@link BoxException} when the connection ended otherwise.
   */
  public CompletableFuture<Integer> exitCode() {
    return exit.copy();
  }

  /** Closes the connection: the server kills the shell's whole tree. */
  @Override
  public void close() {
    listener.closedHere = true;
    if (!socket.isOutputClosed()) {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "closed").exceptionally(e -> null);
    }
    socket.abort();
  }

  private static void await(CompletableFuture<WebSocket> sent) {
    try {
      sent.join();
    } catch (CompletionException e) {
      throw new BoxRuntimeUnavailableException("the terminal's connection has ended", e);
    }
  }

  /** The connection's frames: output, the exit frame, and the close. */
  private static final class Listener implements WebSocket.Listener {
    private final TerminalOutput output;
    private final CompletableFuture<Integer> exit;
    private final StringBuilder text = new StringBuilder();
    private @Nullable Integer exitCode;
    private volatile boolean closedHere;

    Listener(TerminalOutput output, CompletableFuture<Integer> exit) {
      this.output = output;
      this.exit = exit;
    }

    @Override
    public void onOpen(WebSocket ws) {
      ws.request(1);
    }

    @Override
    public @Nullable CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
      byte[] bytes = new byte[data.remaining()];
      data.get(bytes);
      if (bytes.length > 0) {
        output.output(bytes);
      }
      ws.request(1);
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        Integer code = TerminalProtocol.exitCode(text.toString());
        if (code != null) {
          exitCode = code;
        }
        text.setLength(0);
      }
      ws.request(1);
      return null;
    }

    @Override
    public @Nullable CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
      Integer code = exitCode;
      BoxException failure = RelayProtocol.failure(statusCode, reason);
      if (code != null) {
        exit.complete(code);
      } else if (failure != null) {
        exit.completeExceptionally(failure);
      } else {
        exit.completeExceptionally(
            new BoxRuntimeUnavailableException(
                "the terminal closed without an exit code (" + statusCode + " " + reason + ")"));
      }
      return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
      exit.completeExceptionally(
          closedHere
              ? new BoxRuntimeUnavailableException("the terminal was closed")
              : new BoxRuntimeUnavailableException(
                  "the terminal's connection failed: " + error.getMessage(), error));
    }
  }
}
