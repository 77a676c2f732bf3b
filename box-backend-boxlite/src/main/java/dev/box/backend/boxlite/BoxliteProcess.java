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
    this.stdin = withStdin ? new Stdin() : closedStdin();
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
      code = relay();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      socket.abort();
      end(code);
    }
  }

  /**
   * Moves the socket's output into the pipes until it ends; returns the exit code it sent, or
   * {@link #LOST} when it sent none.
   */
  private int relay() throws InterruptedException {
    int code = LOST;
    for (AttachEvent event = listener.next(); ; event = listener.next()) {
      switch (event) {
        case AttachEvent.Output output -> (output.stderr() ? stderr : stdout).offer(output.bytes());
        case AttachEvent.Exit exited -> code = exited.exitCode();
        case AttachEvent.Other other ->
            log.debug("execution {} in {}: {}", execId, sandbox.id(), other.what());
        case AttachEvent.Ended ended -> {
          log.debug("the attach socket of {} in {} ended: {}", execId, sandbox.id(), ended.why());
          return code;
        }
      }
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

  /** Writes go out as binary messages; the end is {@code {"type":"stdin_eof"}}. */
  private final class Stdin extends ChunkedStdin {
    @Override
    protected void sendChunk(byte[] bytes, int offset, int length) throws IOException {
      send(ByteBuffer.wrap(bytes, offset, length));
    }

    @Override
    protected void sendEnd() throws IOException {
      sendText("{\"type\":\"stdin_eof\"}");
    }
  }
}
