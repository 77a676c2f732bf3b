package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code box-agent --relay SOCKET PORT}, as the microvm backend runs it in a network-on
 * VM's namespace: each connection to its Unix socket is carried to the port on loopback byte for
 * byte, both ways, with the end of each side's sending passed on; it ends with its stdin. Here the
 * port is a listener of the test on this namespace's loopback that answers what it got, reversed,
 * once its sender has shut down its side.
 */
class ExecAgentRelayTest {
  @TempDir Path dir;
  private Path binary;
  private ServerSocket reverser;
  private final List<Process> relays = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    ExecAgent installed = ExecAgent.install(dir.resolve("relay"));
    assumeTrue(installed.available(), installed.reason());
    binary = Objects.requireNonNull(installed.binary());
    reverser = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(this::reverseEach);
  }

  @AfterEach
  void tearDown() throws Exception {
    reverser.close();
    relays.forEach(Process::destroyForcibly);
  }

  @Test
  void bytesGoBothWaysUnchanged_andEachSidesEndIsPassedOn() throws Exception {
    Path socket = relay(reverser.getLocalPort());
    byte[] sent = new byte[3 << 20];
    new SecureRandom().nextBytes(sent);

    for (byte[] payload : List.of(sent, new byte[0], new byte[] {42})) {
      try (SocketChannel channel = connect(socket)) {
        Thread writer =
            Thread.ofVirtual()
                .start(
                    () -> {
                      try {
                        ByteBuffer buffer = ByteBuffer.wrap(payload);
                        while (buffer.hasRemaining()) {
                          channel.write(buffer);
                        }
                        channel.shutdownOutput();
                      } catch (IOException e) {
                        throw new IllegalStateException(e);
                      }
                    });
        byte[] back = Channels.newInputStream(channel).readAllBytes();
        writer.join();

        assertThat(back).isEqualTo(reversed(payload));
      }
    }
  }

  @Test
  void theSocketIsTheServersAlone_andTheRelayEndsWithItsStdin() throws Exception {
    Path socket = relay(reverser.getLocalPort());

    assertThat(Files.getPosixFilePermissions(socket))
        .isEqualTo(PosixFilePermissions.fromString("rw-------"));
    Process relay = relays.get(0);
    relay.getOutputStream().close();
    assertThat(relay.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(relay.exitValue()).isZero();
  }

  @Test
  void aConnectionThePortRefuses_isClosed() throws Exception {
    int closed;
    try (ServerSocket gone = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = gone.getLocalPort();
    }
    Path socket = relay(closed);

    try (SocketChannel channel = connect(socket)) {
      assertThat(Channels.newInputStream(channel).read()).isEqualTo(-1);
    }
  }

  @Test
  void badArguments_areRefused() throws Exception {
    for (String port : List.of("0", "65536", "x", "")) {
      Process p =
          new ProcessBuilder(binary.toString(), "--relay", dir.resolve("s").toString(), port)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(port).isEqualTo(2);
    }
  }

  /** Starts a relay to {@code port}, waits for its ready byte, and returns its socket. */
  private Path relay(int port) throws IOException {
    Path socket = dir.resolve("agent-" + relays.size() + ".sock");
    Process relay =
        new ProcessBuilder(binary.toString(), "--relay", socket.toString(), Integer.toString(port))
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    relays.add(relay);
    assertThat(relay.getInputStream().read()).isEqualTo('1');
    return socket;
  }

  private static SocketChannel connect(Path socket) throws IOException {
    SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    channel.connect(UnixDomainSocketAddress.of(socket));
    return channel;
  }

  private void reverseEach() {
    while (!reverser.isClosed()) {
      try {
        Socket s = reverser.accept();
        Thread.ofVirtual().start(() -> reverse(s));
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void reverse(Socket s) {
    try (s;
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream()) {
      out.write(reversed(in.readAllBytes()));
    } catch (IOException e) {
      // The test that made the connection says what went wrong.
    }
  }

  private static byte[] reversed(byte[] bytes) {
    byte[] out = new byte[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      out[i] = bytes[bytes.length - 1 - i];
    }
    return out;
  }
}
