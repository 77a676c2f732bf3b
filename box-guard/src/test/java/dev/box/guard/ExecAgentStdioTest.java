package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code box-agent}, on this host and outside any sandbox, speaking its protocol with a
 * test that plays the server: a process it starts gets its own streams on 0, 1 and 2 even when the
 * agent itself was started with those descriptors closed, so that its own socket and pipes took the
 * lowest numbers.
 */
class ExecAgentStdioTest {
  private static final byte[] TOKEN = {1, 2, 3, 4, 5, 6, 7, 8};

  @TempDir Path dir;
  private final List<AutoCloseable> opened = new java.util.ArrayList<>();
  private @Nullable Process agent;

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : opened) {
      c.close();
    }
    if (agent != null) {
      agent.destroyForcibly().waitFor();
    }
  }

  @Test
  void aProcess_getsItsOwnStreams_whenTheAgentStartedWithStdioClosed() throws Exception {
    Path binary = installedAgent();
    Path socket = dir.resolve("socket");
    ServerSocketChannel server = listen(socket);
    agent =
        new ProcessBuilder(
                "/bin/sh",
                "-c",
                "exec \"$0\" \"$1\" <&- >&- 2>&-",
                binary.toString(),
                socket.toString())
            .start();

    assertThat(runAside(server).get(30, TimeUnit.SECONDS))
        .isEqualTo("stdout=from stdin\n stderr=to stderr\n exit=3");
  }

  @Test
  void asAHolder_theAgentMakesTheHome_saysReady_thenServesItsSocket() throws Exception {
    Path binary = installedAgent();
    Path socket = dir.resolve("socket");
    ServerSocketChannel server = listen(socket);
    Path home = dir.resolve("home");
    agent =
        new ProcessBuilder(binary.toString(), "--home", home.toString(), socket.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();

    byte[] ready = agent.getInputStream().readNBytes(6);
    assertThat(new String(ready, StandardCharsets.UTF_8)).isEqualTo("ready\n");
    assertThat(home).isDirectory();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(home)))
        .isEqualTo("rwx------");
    assertThat(runAside(server).get(30, TimeUnit.SECONDS))
        .isEqualTo("stdout=from stdin\n stderr=to stderr\n exit=3");
  }

  /** The agent installed from this build; the test is skipped where it cannot be. */
  private Path installedAgent() {
    ExecAgent installed = ExecAgent.install(dir.resolve("data"));
    assumeTrue(installed.available(), installed.reason());
    return Objects.requireNonNull(installed.binary());
  }

  /** The server's end of the agent's socket, at {@code socket}. */
  private ServerSocketChannel listen(Path socket) throws IOException {
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    opened.add(server);
    server.bind(UnixDomainSocketAddress.of(socket));
    return server;
  }

  /** {@link #runThroughTheAgent} on a thread of its own. */
  private CompletableFuture<String> runAside(ServerSocketChannel server) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return runThroughTheAgent(server);
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
  }

  /** Starts {@code sh} through the agent with stdin, feeds it, and returns what it did. */
  private String runThroughTheAgent(ServerSocketChannel server) throws IOException {
    SocketChannel control = accept(server);
    ByteBuffer hello = frame(control);
    assertThat((char) hello.get()).isEqualTo('H');

    control.write(
        spawn(
            7,
            List.of("/bin/sh", "-c", "cat; echo to stderr >&2; exit 3"),
            List.of("PATH=/usr/bin:/bin")));
    SocketChannel[] streams = new SocketChannel[3];
    for (int i = 0; i < 3; i++) {
      SocketChannel stream = accept(server);
      ByteBuffer header = frame(stream);
      assertThat((char) header.get()).isEqualTo('O');
      assertThat(header.getInt()).isEqualTo(7);
      header.position(header.position() + TOKEN.length);
      streams[header.get()] = stream;
    }
    ByteBuffer pid = frame(control);
    assertThat((char) pid.get()).isEqualTo('P');
    control.write(ByteBuffer.allocate(9).putInt(5).put((byte) 'G').putInt(7).flip());

    SocketChannel stdin = streams[0];
    stdin.write(ByteBuffer.wrap("from stdin\n".getBytes(StandardCharsets.UTF_8)));
    stdin.shutdownOutput();
    String out = readAll(streams[1]);
    String err = readAll(streams[2]);
    ByteBuffer exit = frame(control);
    assertThat((char) exit.get()).isEqualTo('X');
    assertThat(exit.getInt()).isEqualTo(7);
    return "stdout=" + out + " stderr=" + err + " exit=" + (exit.getInt() >> 8);
  }

  private SocketChannel accept(ServerSocketChannel server) throws IOException {
    SocketChannel channel = server.accept();
    opened.add(channel);
    return channel;
  }

  /** The spawn frame of process {@code id}, whose stdin is a stream too. */
  private static ByteBuffer spawn(int id, List<String> argv, List<String> env) {
    ByteBuffer body = ByteBuffer.allocate(4096);
    body.put((byte) 'S').putInt(id).put(TOKEN).put((byte) 1);
    for (List<String> words : List.of(argv, env)) {
      body.putInt(words.size());
      for (String word : words) {
        byte[] bytes = word.getBytes(StandardCharsets.UTF_8);
        body.putInt(bytes.length).put(bytes);
      }
    }
    body.flip();
    return ByteBuffer.allocate(4 + body.remaining()).putInt(body.remaining()).put(body).flip();
  }

  /** The next frame on {@code channel}: its type and payload. */
  private static ByteBuffer frame(SocketChannel channel) throws IOException {
    ByteBuffer length = readFully(channel, 4);
    return readFully(channel, length.getInt());
  }

  private static ByteBuffer readFully(SocketChannel channel, int size) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(size);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer) < 0) {
        throw new IOException("the agent closed the connection");
      }
    }
    return buffer.flip();
  }

  private static String readAll(SocketChannel channel) throws IOException {
    return new String(Channels.newInputStream(channel).readAllBytes(), StandardCharsets.UTF_8);
  }
}
