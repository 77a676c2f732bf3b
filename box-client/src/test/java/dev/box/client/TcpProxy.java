package dev.box.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback in front of a server, to break connections the way a network does: reset
 * them ({@link #dropConnections()}), let them go silent ({@link #silenceConnections()}), or refuse
 * new ones for a while. Both ends see real socket events, so the code under test takes the same
 * path as after a real network failure.
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final int targetPort;
  private final List<Link> links = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile boolean refusing;

  /** One proxied connection: the client's socket, the server's, and which ways have gone silent. */
  private record Link(
      Socket client, Socket server, AtomicBoolean silentDown, AtomicBoolean silentUp) {
    Link(Socket client, Socket server) {
      this(client, server, new AtomicBoolean(), new AtomicBoolean());
    }

    void reset() {
      resetQuietly(client);
      resetQuietly(server);
    }
  }

  private TcpProxy(ServerSocket listener, int targetPort) {
    this.listener = listener;
    this.targetPort = targetPort;
    Thread.ofVirtual().name("tcp-proxy-accept").start(this::acceptLoop);
  }

  /** A proxy to {@code 127.0.0.1:targetPort}. */
  public static TcpProxy to(int targetPort) {
    try {
      return new TcpProxy(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), targetPort);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The proxy's address as an http URL. */
  public URI uri() {
    return URI.create("http://127.0.0.1:" + listener.getLocalPort());
  }

  /** How many connections the proxy accepted and forwarded so far. */
  public int connectionsAccepted() {
    return accepted.get();
  }

  /** Resets every open connection on both sides, as a broken network path does. */
  public void dropConnections() {
    List<Link> open = List.copyOf(links);
    links.removeAll(open);
    open.forEach(Link::reset);
  }

  /**
   * Resets the connections that stopped carrying bytes from the server, leaving alone the ones
   * opened since: a client that already replaced a silenced connection keeps its new one.
   */
  public void dropSilencedConnections() {
    List<Link> silenced = links.stream().filter(l -> l.silentDown().get()).toList();
    links.removeAll(silenced);
    silenced.forEach(Link::reset);
  }

  /** Open connections stop carrying bytes in both directions but stay open. */
  public void silenceConnections() {
    links.forEach(
        l -> {
          l.silentDown().set(true);
          l.silentUp().set(true);
        });
  }

  /** Open connections stop carrying bytes from the server to the client but stay open. */
  public void silenceServerToClient() {
    links.forEach(l -> l.silentDown().set(true));
  }

  /** While {@code refuse}, new connections are reset as soon as they are accepted. */
  public void refuseConnections(boolean refuse) {
    refusing = refuse;
  }

  @Override
  public void close() {
    try {
      listener.close();
    } catch (IOException e) {
      // Closing anyway.
    }
    dropConnections();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return;
      }
      if (refusing) {
        resetQuietly(client);
        continue;
      }
      try {
        Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        client.setTcpNoDelay(true);
        server.setTcpNoDelay(true);
        Link link = new Link(client, server);
        links.add(link);
        accepted.incrementAndGet();
        Thread.ofVirtual().start(() -> pump(link, true));
        Thread.ofVirtual().start(() -> pump(link, false));
      } catch (IOException e) {
        resetQuietly(client);
      }
    }
  }

  private void pump(Link link, boolean up) {
    byte[] buffer = new byte[16 * 1024];
    try (InputStream in = (up ? link.client() : link.server()).getInputStream();
        OutputStream out = (up ? link.server() : link.client()).getOutputStream()) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        if ((up ? link.silentUp() : link.silentDown()).get()) {
          continue; // Swallowed, as by a path that went dark.
        }
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // The other pump or a drop closed the link.
    } finally {
      // When one side leaves, the other learns it, even on a silenced link: as when a path that
      // went dark comes back and the next packet meets a closed port.
      links.remove(link);
      closeQuietly(link.client());
      closeQuietly(link.server());
    }
  }

  private static void resetQuietly(Socket socket) {
    try {
      socket.setSoLinger(true, 0);
    } catch (IOException e) {
      // Closed already.
    }
    closeQuietly(socket);
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Closed already.
    }
  }
}
