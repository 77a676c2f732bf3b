package dev.box.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP port on this JVM's loopback whose connections are carried to a Unix socket: with relay.pl
 * at the other end, the way into a server that listens on another network namespace's loopback. A
 * virtual thread accepts, and two pump each connection.
 */
final class UnixSocketForwarder implements AutoCloseable {
  private final ServerSocketChannel server;
  private final Path socket;
  private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();

  private UnixSocketForwarder(ServerSocketChannel server, Path socket) {
    this.server = server;
    this.socket = socket;
  }

  /** Listens on a port of this JVM's loopback the kernel picks, forwarding to {@code socket}. */
  static UnixSocketForwarder start(Path socket) throws IOException {
    ServerSocketChannel server =
        ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    UnixSocketForwarder forwarder = new UnixSocketForwarder(server, socket);
    Thread.startVirtualThread(forwarder::accept);
    return forwarder;
  }

  int port() {
    return server.socket().getLocalPort();
  }

  private void accept() {
    while (server.isOpen()) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // Closed.
      }
      open.add(client);
      try {
        SocketChannel upstream = SocketChannel.open(UnixDomainSocketAddress.of(socket));
        open.add(upstream);
        Thread.startVirtualThread(() -> pump(client, upstream));
        Thread.startVirtualThread(() -> pump(upstream, client));
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  /** Copies until either side ends, then closes both (HTTP clients do not half-close). */
  private void pump(SocketChannel from, SocketChannel to) {
    ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    try {
      while (from.read(buffer) >= 0) {
        buffer.flip();
        while (buffer.hasRemaining()) {
          to.write(buffer);
        }
        buffer.clear();
      }
    } catch (IOException e) {
      // The other pump closed the channels, or the peer went away: the connection is over.
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private void closeQuietly(SocketChannel channel) {
    open.remove(channel);
    try {
      channel.close();
    } catch (IOException e) {
      // Nothing to do about a channel that cannot close.
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    open.forEach(this::closeQuietly);
  }
}
