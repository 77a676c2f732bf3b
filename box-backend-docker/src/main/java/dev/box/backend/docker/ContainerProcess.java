package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.time.Ticker;
import dev.box.core.backend.PipedProcess;
import dev.box.sandbox.engine.EngineClient;
import dev.box.sandbox.engine.EngineThreads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process started in a container with the engine's exec API.
 *
 * <p>Its output arrives multiplexed on the hijacked connection (an 8-byte header per frame), and is
 * split into stdout and stderr by one demultiplexer thread of the engine client's {@link
 * EngineThreads}. Its exit is learnt by inspecting the exec, because the engine keeps the stream
 * open while a background process still holds it. The process tree is found inside the container by
 * a tag in its environment (see {@link ContainerSandbox#signalTree}).
 */
final class ContainerProcess extends PipedProcess {
  private static final Logger log = LoggerFactory.getLogger(ContainerProcess.class);
  private static final Duration INSPECT_TIMEOUT = Duration.ofSeconds(5);

  /**
   * The first look at a running exec. Short commands are seen to end by their stream first (which
   * triggers a look at once), so early looks would only compete with the engine for the CPU.
   */
  private static final long FIRST_POLL_MILLIS = 50;

  private static final long MAX_POLL_MILLIS = 100;

  /** After this long a process is long-lived: its exit is polled for once a second only. */
  private static final long LONG_LIVED_NANOS = TimeUnit.SECONDS.toNanos(10);

  private static final long LONG_LIVED_POLL_MILLIS = 1000;

  private final ContainerSandbox sandbox;
  private final EngineClient engine;
  private final ScheduledExecutorService exits;
  private final String execId;
  private final String tag;
  private final SocketChannel channel;
  private final OutputStream stdin;
  private final Ticker ticker;
  private final long startedAt;

  ContainerProcess(
      ContainerSandbox sandbox,
      EngineClient engine,
      String execId,
      String tag,
      EngineClient.Hijacked connection,
      boolean withStdin,
      Ticker ticker) {
    super(137);
    this.ticker = ticker;
    this.startedAt = ticker.read();
    this.sandbox = sandbox;
    this.engine = engine;
    this.exits = engine.threads().exits();
    this.execId = execId;
    this.tag = tag;
    this.channel = connection.channel();
    this.stdin = withStdin ? new Stdin(channel) : OutputStream.nullOutputStream();
    if (!withStdin) {
      closeQuietly(this.stdin);
    }
    InputStream in = connection.in();
    engine.threads().streams().execute(() -> demultiplex(in));
    pollAfter(FIRST_POLL_MILLIS, FIRST_POLL_MILLIS);
  }

  private void demultiplex(InputStream in) {
    byte[] header = new byte[8];
    try {
      while (true) {
        int n = in.readNBytes(header, 0, 8);
        if (n < 8) {
          break;
        }
        int size = ByteBuffer.wrap(header, 4, 4).getInt();
        byte[] payload = in.readNBytes(size);
        if (header[0] == 2) {
          stderr.offer(payload);
        } else if (header[0] == 1) {
          stdout.offer(payload);
        }
        if (payload.length < size) {
          break;
        }
      }
    } catch (IOException e) {
      log.debug("exec stream {} ended: {}", execId, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        stdout.finish();
        stderr.finish();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      // The stream ends when the process and all holders of its output are gone: look now.
      if (!exit.isDone()) {
        pollAfter(0, 1);
      }
    }
  }

  /** Inspects the exec; completes {@link #exit} or polls again later, backing off. */
  private void poll(long delayMillis) {
    if (exit.isDone()) {
      return;
    }
    try {
      EngineClient.Response answer =
          engine.call("GET", "/exec/" + execId + "/json", null, INSPECT_TIMEOUT);
      if (answer.status() == 404) {
        // The container is gone, and the exec with it.
        exit.complete(137);
        return;
      }
      JsonNode state = answer.json();
      if (answer.ok() && !state.path("Running").asBoolean(true) && state.has("ExitCode")) {
        JsonNode code = state.get("ExitCode");
        if (code != null && code.isNumber()) {
          exit.complete(code.asInt());
          return;
        }
      }
    } catch (IOException e) {
      log.debug("cannot inspect exec {}: {}", execId, e.toString());
      if (!sandbox.isAlive()) {
        exit.complete(137);
        return;
      }
    }
    // The stream's end triggers a poll at once; polling is for exits while a background process
    // still holds the stream, so a long-lived process is polled rarely.
    long cap =
        ticker.read() - startedAt < LONG_LIVED_NANOS ? MAX_POLL_MILLIS : LONG_LIVED_POLL_MILLIS;
    long next = Math.min(cap, delayMillis * 2);
    pollAfter(delayMillis, next);
  }

  /**
   * Polls in {@code delayMillis}, and then again {@code nextMillis} later if need be. Once the
   * engine's threads are closed, nothing will look again: the process counts as killed.
   */
  private void pollAfter(long delayMillis, long nextMillis) {
    try {
      exits.schedule(() -> poll(nextMillis), delayMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      exit.complete(137);
    }
  }

  @Override
  public OutputStream stdin() {
    return stdin;
  }

  @Override
  public void terminateTree() {
    sandbox.signalTree(tag, "TERM");
  }

  @Override
  public void killTree() {
    sandbox.signalTree(tag, "KILL");
  }

  @Override
  public void release() {
    exit.complete(exit.getNow(137));
    closeQuietly(stdout);
    closeQuietly(stderr);
    try {
      channel.close();
    } catch (IOException e) {
      log.debug("closing exec stream {}: {}", execId, e.toString());
    }
  }

  private static void closeQuietly(java.io.Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException e) {
      // Nothing left to do with it.
    }
  }

  /** Writes stdin on the hijacked connection; closing it half-closes the connection (EOF). */
  private static final class Stdin extends OutputStream {
    private final SocketChannel channel;

    Stdin(SocketChannel channel) {
      this.channel = channel;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
      ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }

    @Override
    public void close() throws IOException {
      if (channel.isOpen()) {
        channel.shutdownOutput();
      }
    }
  }
}
