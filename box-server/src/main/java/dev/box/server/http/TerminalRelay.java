package dev.box.server.http;

import dev.box.api.BoxValidationException;
import dev.box.api.internal.RelayProtocol;
import dev.box.api.internal.TerminalProtocol;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One terminal WebSocket and the process on its terminal: what the terminal writes goes out as
 * binary frames, each sent before the next is read (a slow client slows the process, nothing piles
 * up); binary frames from the client are written to the terminal, text frames resize it ({@link
 * TerminalProtocol}). When the process exits its whole tree is killed, and once the terminal's
 * output is all sent the server sends the exit frame and closes normally. When the client goes
 * away, the tree is killed.
 */
final class TerminalRelay implements RelayEnd {
  private static final Logger log = LoggerFactory.getLogger(TerminalRelay.class);

  private static final int CHUNK = 64 * 1024;

  /** How long the exit may come after the terminal's output ended (both follow the same end). */
  private static final Duration EXIT_WAIT = Duration.ofSeconds(10);

  private final SandboxProcess process;
  private final Session socket;
  private final RelayMeter meter;
  private final AtomicBoolean ended = new AtomicBoolean();

  TerminalRelay(SandboxProcess process, Session socket, RelayMeter meter) {
    this.process = process;
    this.socket = socket;
    this.meter = meter;
  }

  /** Relays the terminal's output on a virtual thread; its processes die with the shell. */
  void start() {
    Thread.ofVirtual().name("box-terminal").start(this::relayOutput);
    process
        .onExit()
        .whenComplete(
            (code, failure) -> Thread.ofVirtual().name("box-terminal-end").start(this::killTree));
  }

  private void relayOutput() {
    byte[] buffer = new byte[CHUNK];
    try (InputStream output = process.stdout()) {
      int n;
      while ((n = output.read(buffer)) >= 0) {
        if (n > 0) {
          send(buffer, n);
          meter.stdout().accept(n);
        }
      }
      int code = process.onExit().get(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      Callback.Completable sent = new Callback.Completable();
      socket.sendText(TerminalProtocol.exitFrame(code), sent);
      sent.get();
      close(TerminalProtocol.NORMAL_CLOSURE, "exit");
    } catch (IOException | TimeoutException e) {
      log.debug("the terminal relay ended: {}", e.toString());
      ErrorMapper.closeRelay(socket, e);
    } catch (ExecutionException e) {
      // The client went away during a send, or the sandbox ended under the terminal.
      Throwable cause = e.getCause();
      ErrorMapper.closeRelay(socket, cause != null ? cause : e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      stop();
    }
  }

  private void send(byte[] buffer, int length) throws ExecutionException, InterruptedException {
    Callback.Completable sent = new Callback.Completable();
    // Sent before the buffer is read into again.
    socket.sendBinary(ByteBuffer.wrap(buffer, 0, length), sent);
    sent.get();
  }

  /** A binary frame: keys for the terminal, written before the next frame is read. */
  @Override
  public void onBinary(byte[] bytes) {
    if (ended.get() || bytes.length == 0) {
      return;
    }
    try {
      OutputStream input = process.stdin();
      input.write(bytes);
      input.flush();
      meter.stdin().accept(bytes.length);
    } catch (IOException e) {
      log.debug("the terminal's input is closed: {}", e.toString());
    }
  }

  /** A text frame: a resize; anything else closes the socket as a policy violation. */
  @Override
  public void onText(String text) {
    try {
      TerminalProtocol.Size size = TerminalProtocol.resize(text);
      process.resize(new ProcessSpec.Terminal(size.cols(), size.rows()));
    } catch (RuntimeException e) {
      close(
          TerminalProtocol.POLICY_VIOLATION,
          RelayProtocol.closeReason(new BoxValidationException(String.valueOf(e.getMessage()))));
    }
  }

  /** The client went away, or the relay ended: the terminal's tree is killed and released. */
  @Override
  public void stop() {
    if (ended.compareAndSet(false, true)) {
      Thread.ofVirtual().name("box-terminal-end").start(this::end);
    }
  }

  private void end() {
    killTree();
    process.release();
    closeQuietly(process.stdin());
    closeQuietly(process.stderr());
    closeQuietly(process.stdout());
  }

  private void killTree() {
    try {
      process.killTree();
    } catch (RuntimeException e) {
      log.debug("cannot kill the terminal's tree: {}", e.toString());
    }
  }

  private void close(int code, String reason) {
    if (socket.isOpen()) {
      socket.close(code, reason, Callback.NOOP);
    }
  }

  private static void closeQuietly(AutoCloseable stream) {
    try {
      stream.close();
    } catch (Exception e) {
      // Closed either way.
    }
  }
}
