package dev.box.backend.boxlite;

import dev.box.core.backend.PipedProcess;
import java.io.IOException;
import java.io.OutputStream;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An execution in a box, its stdio on the execution's attach WebSocket ({@link AttachListener}).
 * One virtual thread moves what the socket delivers into the stdout and stderr pipes; the exit
 * message completes the exit. Stdin goes out as binary messages and its end as {@code
 * {"type":"stdin_eof"}}. The tree is signalled inside the box by its environment tag ({@link
 * BoxliteSandbox#signalTree}), after BoxLite's own signal to the execution (SIGTERM through {@code
 * POST .../signal}, SIGKILL through {@code DELETE .../executions/{id}}).
 */
final class BoxliteProcess extends PipedProcess {
  private static final Logger log = LoggerFactory.getLogger(BoxliteProcess.class);

  /** The exit code when the socket ends before the exit message: the box went away. */
  static final int LOST = 128 + 9;

  private static final int SIGTERM = 15;
  private static final long SEND_TIMEOUT_SECONDS = 60;

  private final BoxliteSandbox sandbox;
  private final String execId;
  private final String tag;
  private final AttachListener listener;
  private final WebSocket socket;
  private final OutputStream stdin;

  private BoxliteProcess(
      BoxliteSandbox sandbox,
      String execId,
      String tag,
      AttachListener listener,
      WebSocket socket,
      boolean withStdin) {
    super(LOST);
    this.sandbox = sandbox;
    this.execId = execId;
    this.tag = tag;
    this.listener = listener;
    this.socket = socket;
    this.stdin = withStdin ? new Stdin() : OutputStream.nullOutputStream();
    if (!withStdin) {
      closeQuietly(stdin);
    }
  }

  /** Attaches to the execution {@code execId} of {@code sandbox} and starts moving its output. */
  static BoxliteProcess attach(
      BoxliteSandbox sandbox, BoxliteApi api, String execId, String tag, boolean withStdin)
      throws IOException {
    AttachListener listener = new AttachListener();
    WebSocket socket = api.attach(sandbox.id(), execId, listener);
    BoxliteProcess process = new BoxliteProcess(sandbox, execId, tag, listener, socket, withStdin);
    Thread.ofVirtual().name("boxlite-exec-" + execId).start(process::pump);
    return process;
  }

  private void pump() {
    int code = LOST;
    try {
      while (true) {
        AttachEvent event = listener.next();
        if (event instanceof AttachEvent.Output output) {
          (output.stderr() ? stderr : stdout).offer(output.bytes());
        } else if (event instanceof AttachEvent.Exit exited) {
          code = exited.exitCode();
        } else if (event instanceof AttachEvent.Ended ended) {
          log.debug("the attach socket of {} in {} ended: {}", execId, sandbox.id(), ended.why());
          break;
        } else if (event instanceof AttachEvent.Other other) {
          log.debug("execution {} in {}: {}", execId, sandbox.id(), other.what());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      socket.abort();
      try {
        stdout.finish();
        stderr.finish();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exit.complete(code);
    }
  }

  @Override
  public OutputStream stdin() {
    return stdin;
  }

  @Override
  public void terminateTree() {
    if (!exit.isDone()) {
      sandbox.signalExecution(execId, SIGTERM);
    }
    sandbox.signalTree(tag, "TERM");
  }

  @Override
  public void killTree() {
    sandbox.signalTree(tag, "KILL");
    if (!exit.isDone()) {
      sandbox.killExecution(execId);
    }
  }

  @Override
  public void release() {
    // The execution keeps running in the box without this socket, as BoxLite lets it.
    socket.abort();
  }

  private void send(ByteBuffer binary) throws IOException {
    await(socket.sendBinary(binary, true));
  }

  private void sendText(String text) throws IOException {
    await(socket.sendText(text, true));
  }

  private static void await(java.util.concurrent.CompletableFuture<WebSocket> sent)
      throws IOException {
    try {
      sent.get(SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new IOException("stdin could not be sent: " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new IOException("stdin could not be sent within " + SEND_TIMEOUT_SECONDS + " s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while sending stdin", e);
    }
  }

  private static void closeQuietly(OutputStream out) {
    try {
      out.close();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** Writes go out as binary messages, in order, of at most 64 KiB each. */
  private final class Stdin extends OutputStream {
    private static final int CHUNK = 64 * 1024;
    private boolean closed;

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
      if (closed) {
        throw new IOException("stdin is closed");
      }
      for (int at = offset; at < offset + length; at += CHUNK) {
        send(ByteBuffer.wrap(bytes, at, Math.min(offset + length - at, CHUNK)));
      }
    }

    @Override
    public synchronized void close() throws IOException {
      if (!closed) {
        closed = true;
        if (!exit.isDone()) {
          sendText("{\"type\":\"stdin_eof\"}");
        }
      }
    }
  }
}
