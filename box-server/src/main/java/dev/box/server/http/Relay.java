package dev.box.server.http;

import dev.box.api.internal.RelayProtocol;
import dev.box.core.process.ManagedProcess;
import dev.box.core.process.StdoutBuffer;
import dev.box.core.session.ProcessManager;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One WebSocket client attached to a managed process's stdio.
 *
 * <p>In line mode (the default, what MCP clients speak) each stdout line goes out as one TEXT frame
 * without its newline, and each TEXT frame from the client is written to stdin with a newline. In
 * raw mode stdout goes out as BINARY frames of the bytes as written, after one TEXT frame {@code
 * {"type":"start","offset":N}}. In both modes an empty BINARY frame closes stdin, and when stdout
 * ends the server closes the socket with code 1000 and the reason {@code exit_code=N}; a failure
 * closes it with the code and reason {@link ErrorMapper} gives it ({@link RelayProtocol} has the
 * codes). Delivery is tracked by byte offset: a new attachment starts where the last one stopped,
 * or at {@code from}.
 */
final class Relay implements RelayEnd {
  private static final Logger log = LoggerFactory.getLogger(Relay.class);

  private static final int CHUNK = 64 * 1024;
  private static final Duration EXIT_WAIT = Duration.ofSeconds(2);

  enum Mode {
    LINE,
    RAW
  }

  /**
   * The client at the other end: its socket, how it asked stdout to be framed, and the offset it
   * asked to start at (null: where the last attachment stopped).
   */
  record Client(Session socket, Mode mode, @Nullable Long from) {}

  private final ManagedProcess process;
  private final ProcessManager processes;
  private final Client client;
  private final RelayMeter meter;
  private final CompletableFuture<ManagedProcess.@Nullable Attachment> attached =
      new CompletableFuture<>();
  private volatile @Nullable Thread pump;
  private volatile boolean closed;

  Relay(ManagedProcess process, ProcessManager processes, Client client, RelayMeter meter) {
    this.process = process;
    this.processes = processes;
    this.client = client;
    this.meter = meter;
  }

  /** Waits for the attachment (one client at a time) on a virtual thread, then relays stdout. */
  void start() {
    pump = Thread.ofVirtual().name("box-relay").start(this::run);
  }

  private void run() {
    ManagedProcess.Attachment attachment = null;
    try {
      while (attachment == null && !closed) {
        attachment = process.attach(Duration.ofSeconds(1));
      }
      attached.complete(attachment);
      if (attachment == null) {
        return;
      }
      relayStdout();
    } catch (InterruptedException | ClientGone e) {
      attached.complete(null);
    } catch (RuntimeException e) {
      log.debug("relay of {} failed: {}", process.spec().processId(), e.toString());
      closed = true;
      ErrorMapper.closeRelay(client.socket(), e);
    } finally {
      if (attachment != null) {
        attachment.close();
      }
    }
  }

  private void relayStdout() throws InterruptedException {
    StdoutBuffer stdout = process.stdout();
    Long from = client.from();
    long offset = from != null ? from : stdout.delivered();
    if (client.mode() == Mode.RAW) {
      send(RelayProtocol.startFrame(offset));
    }
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (!closed) {
      byte[] chunk;
      try {
        chunk = stdout.read(offset + line.size(), CHUNK, Duration.ofSeconds(1));
      } catch (StdoutBuffer.OffsetGoneException e) {
        close(RelayProtocol.OFFSET_GONE, RelayProtocol.offsetGoneReason(e.firstAvailable()));
        return;
      }
      if (chunk.length == 0) {
        if (stdout.isEndOfStream(offset + line.size())) {
          if (line.size() > 0) {
            offset = sendLine(line, offset, line.size());
          }
          closeWithExit();
          return;
        }
        continue;
      }
      processes.touch(process);
      if (client.mode() == Mode.RAW) {
        sendBinary(chunk);
        meter.stdout().accept(chunk.length);
        offset += chunk.length;
        stdout.markDelivered(offset);
        continue;
      }
      int lineStart = 0;
      for (int i = 0; i < chunk.length; i++) {
        if (chunk[i] == '\n') {
          line.write(chunk, lineStart, i - lineStart);
          offset = sendLine(line, offset, line.size() + 1);
          lineStart = i + 1;
        }
      }
      line.write(chunk, lineStart, chunk.length - lineStart);
      if (line.size() >= stdout.capacity()) {
        close(
            RelayProtocol.LINE_TOO_LONG,
            "stdout line longer than the " + stdout.capacity() + "-byte buffer");
        return;
      }
    }
  }

  /** Sends one line (without its newline) and marks {@code consumed} more bytes delivered. */
  private long sendLine(ByteArrayOutputStream line, long offset, int consumed)
      throws InterruptedException {
    send(line.toString(StandardCharsets.UTF_8));
    meter.stdout().accept(consumed);
    line.reset();
    long next = offset + consumed;
    process.stdout().markDelivered(next);
    return next;
  }

  private void closeWithExit() throws InterruptedException {
    try {
      int code = process.exit().get(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      close(RelayProtocol.NORMAL_CLOSURE, RelayProtocol.exitReason(code));
    } catch (TimeoutException | ExecutionException e) {
      close(RelayProtocol.NORMAL_CLOSURE, RelayProtocol.STDOUT_CLOSED);
    }
  }

  /** A TEXT frame from the client: one line of stdin. */
  @Override
  public void onText(String text) {
    if (awaitAttached()) {
      write((text + "\n").getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A BINARY frame from the client: raw stdin bytes; an empty frame closes stdin. */
  @Override
  public void onBinary(byte[] bytes) {
    if (!awaitAttached()) {
      return;
    }
    if (bytes.length == 0) {
      process.closeStdin();
    } else if (client.mode() == Mode.RAW) {
      write(bytes);
    }
  }

  private void write(byte[] bytes) {
    try {
      process.writeStdin(bytes);
      meter.stdin().accept(bytes.length);
      processes.touch(process);
    } catch (java.io.IOException e) {
      log.debug("stdin of {} is closed: {}", process.spec().processId(), e.toString());
    }
  }

  /** Messages wait until this client holds the attachment; false when it never will. */
  private boolean awaitAttached() {
    try {
      return attached.get() != null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      return false;
    }
  }

  /** The client went away: stop relaying; the process keeps running. */
  @Override
  public void stop() {
    closed = true;
    Thread thread = pump;
    if (thread != null) {
      thread.interrupt();
    }
  }

  private void send(String text) throws InterruptedException {
    Callback.Completable done = new Callback.Completable();
    client.socket().sendText(text, done);
    await(done);
  }

  private void sendBinary(byte[] bytes) throws InterruptedException {
    Callback.Completable done = new Callback.Completable();
    client.socket().sendBinary(ByteBuffer.wrap(bytes), done);
    await(done);
  }

  private void await(Callback.Completable done) throws InterruptedException {
    try {
      done.get();
    } catch (ExecutionException e) {
      closed = true;
      throw new ClientGone();
    }
  }

  /** The client closed the socket while a frame was being sent. */
  private static final class ClientGone extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ClientGone() {
      super(null, null, false, false);
    }
  }

  private void close(int code, String reason) {
    closed = true;
    Session socket = client.socket();
    if (socket.isOpen()) {
      socket.close(code, reason, Callback.NOOP);
    }
  }
}
