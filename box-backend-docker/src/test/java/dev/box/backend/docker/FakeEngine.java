package dev.box.backend.docker;

import dev.box.sandbox.engine.HttpReader;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A fake engine on a Unix socket, for the one behaviour the real engines cannot show here (a pull
 * that hangs): it answers {@code /version}, knows no image ({@code /containers/create} is 404) and
 * never answers {@code /images/create}. It records every request line.
 */
final class FakeEngine implements AutoCloseable {
  private final Path socket;
  private final ServerSocketChannel server;
  private final List<String> requests = new CopyOnWriteArrayList<>();
  private final List<SocketChannel> hanging = new CopyOnWriteArrayList<>();
  private final Thread thread;

  private FakeEngine(Path socket, ServerSocketChannel server) {
    this.socket = socket;
    this.server = server;
    this.thread = Thread.ofPlatform().daemon().name("fake-engine").start(this::serve);
  }

  static FakeEngine start(Path socket) throws IOException {
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    return new FakeEngine(socket, server);
  }

  Path socket() {
    return socket;
  }

  /** How many requests had {@code pathPart} in their request line. */
  long requests(String pathPart) {
    return requests.stream().filter(r -> r.contains(pathPart)).count();
  }

  private void serve() {
    try {
      while (true) {
        SocketChannel connection = server.accept();
        HttpReader in = new HttpReader(Channels.newInputStream(connection));
        String request = in.readLine("request line");
        long length = 0;
        for (String h = in.readLine("header"); !h.isEmpty(); h = in.readLine("header")) {
          if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
            length = Long.parseLong(h.substring("content-length:".length()).strip());
          }
        }
        in.stream().readNBytes((int) length);
        requests.add(request);
        if (request.contains("/images/create")) {
          hanging.add(connection);
        } else if (request.contains("/containers/create")) {
          answer(connection, 404, "{\"message\":\"No such image\"}");
        } else {
          answer(connection, 200, "{\"Version\":\"fake\",\"ApiVersion\":\"1.41\"}");
        }
      }
    } catch (IOException e) {
      // Closed: the test is over.
    }
  }

  private static void answer(SocketChannel connection, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 "
            + status
            + " X\r\nContent-Type: application/json\r\nContent-Length: "
            + bytes.length
            + "\r\n\r\n";
    try (connection) {
      connection.write(ByteBuffer.wrap(head.getBytes(StandardCharsets.US_ASCII)));
      connection.write(ByteBuffer.wrap(bytes));
    }
  }

  @Override
  public void close() throws IOException, InterruptedException {
    server.close();
    for (SocketChannel c : hanging) {
      c.close();
    }
    thread.join(5000);
  }
}
