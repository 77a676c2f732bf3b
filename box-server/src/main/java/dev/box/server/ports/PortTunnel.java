package dev.box.server.ports;

import dev.box.core.backend.SandboxProcess;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.FutureCallback;
import org.jspecify.annotations.Nullable;

/**
 * The raw bytes of an upgraded connection (a WebSocket's, after its 101) relayed both ways between
 * the client's socket and the pipe to the sandbox's port, each way on a virtual thread through a
 * fixed buffer, each write completing before the next read (so a slow side holds the other back).
 * When either side ends, both end: the pipe is killed and the client's socket closed.
 *
 * <p>It replaces the HTTP connection of the client's socket once the 101 has gone out: the servlet
 * API's own upgrade does not hand the socket over, so this is the server's connection upgrade, as
 * its WebSocket upgrade does it. A tunnel with no traffic either way for {@link #IDLE} ends.
 */
final class PortTunnel extends AbstractConnection implements Connection.UpgradeTo {
  /** How long a tunnel may carry nothing before it ends. */
  static final Duration IDLE = Duration.ofHours(1);

  private final SandboxProcess pipe;
  private final InputStream fromSandbox;
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile @Nullable ByteBuffer prefilled;

  private PortTunnel(
      EndPoint endPoint, Executor executor, SandboxProcess pipe, InputStream fromSandbox) {
    super(endPoint, executor);
    this.pipe = pipe;
    this.fromSandbox = fromSandbox;
  }

  /**
   * Makes the socket of {@code request} a tunnel to {@code pipe} once its answer (a 101, which the
   * caller sets) is sent.
   *
   * @param fromSandbox what the pipe gives, from the first byte after the 101's head
   */
  static void install(HttpServletRequest request, SandboxProcess pipe, InputStream fromSandbox) {
    Request core = ServletContextRequest.getServletContextRequest(request);
    EndPoint endPoint = core.getConnectionMetaData().getConnection().getEndPoint();
    Executor executor = core.getConnectionMetaData().getConnector().getExecutor();
    core.setAttribute(
        HttpStream.UPGRADE_CONNECTION_ATTRIBUTE,
        new PortTunnel(endPoint, executor, pipe, fromSandbox));
  }

  @Override
  public void onUpgradeTo(@Nullable ByteBuffer buffer) {
    if (buffer != null && buffer.hasRemaining()) {
      ByteBuffer copy = ByteBuffer.allocate(buffer.remaining());
      copy.put(buffer).flip();
      prefilled = copy;
    }
  }

  @Override
  public void onOpen() {
    super.onOpen();
    getEndPoint().setIdleTimeout(IDLE.toMillis());
    run("box-port-up", this::up);
    run("box-port-down", this::down);
  }

  /** Not called: {@link #up} reads the socket itself. */
  @Override
  public void onFillable() {}

  @Override
  public void onClose(@Nullable Throwable cause) {
    end();
    super.onClose(cause);
  }

  /** The client's bytes to the sandbox. */
  private void up() throws IOException, ExecutionException, InterruptedException {
    OutputStream toSandbox = pipe.stdin();
    ByteBuffer early = prefilled;
    if (early != null) {
      toSandbox.write(early.array(), early.position(), early.remaining());
      toSandbox.flush();
    }
    ByteBuffer buffer = BufferUtil.allocate(UpstreamBody.BUFFER);
    while (!ended.get()) {
      BufferUtil.clear(buffer);
      int n = getEndPoint().fill(buffer);
      if (n < 0) {
        return;
      }
      if (n == 0) {
        FutureCallback readable = new FutureCallback();
        getEndPoint().fillInterested(readable);
        readable.get();
        continue;
      }
      toSandbox.write(buffer.array(), buffer.arrayOffset() + buffer.position(), n);
      toSandbox.flush();
    }
  }

  /** The sandbox's bytes to the client. */
  private void down() throws IOException, ExecutionException, InterruptedException {
    byte[] buffer = new byte[UpstreamBody.BUFFER];
    for (int n = fromSandbox.read(buffer); n >= 0 && !ended.get(); n = fromSandbox.read(buffer)) {
      FutureCallback written = new FutureCallback();
      getEndPoint().write(written, ByteBuffer.wrap(buffer, 0, n));
      written.get();
    }
  }

  /** One way of the tunnel, on a thread of its own, which ends the tunnel when it ends. */
  private void run(String name, Way way) {
    Thread.ofVirtual()
        .name(name)
        .start(
            () -> {
              try {
                way.relay();
              } catch (IOException | ExecutionException e) {
                // Either side went away, or the socket was idle too long: both end.
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                end();
              }
            });
  }

  /** One way of the tunnel: relays until its source ends. */
  private interface Way {
    void relay() throws IOException, ExecutionException, InterruptedException;
  }

  /** Kills the pipe and closes the client's socket, once. */
  private void end() {
    if (ended.compareAndSet(false, true)) {
      pipe.killTree();
      pipe.release();
      getEndPoint().close();
    }
  }
}
