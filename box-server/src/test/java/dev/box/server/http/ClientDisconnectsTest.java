package dev.box.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link ClientDisconnects} on real TCP connections over loopback, read from the kernel's tables.
 */
class ClientDisconnectsTest {
  private final ClientDisconnects disconnects = new ClientDisconnects();

  @Test
  void anOpenConnection_isEstablished_andOneTheClientClosed_isNot() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(listener.getInetAddress(), listener.getLocalPort());
        Socket server = listener.accept()) {
      ClientDisconnects.Connection connection = serverEnd(server);
      assertThat(disconnects.established(Set.of(connection))).containsExactly(connection);

      client.close();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> disconnects.established(Set.of(connection)).isEmpty());
    }
  }

  @Test
  void aWatchedConnection_isToldGoneOnce_whenTheClientClosesIt_withoutAWrite() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(listener.getInetAddress(), listener.getLocalPort());
        Socket server = listener.accept()) {
      CountDownLatch gone = new CountDownLatch(1);
      try (ClientDisconnects.Watch watch = disconnects.watch(serverEnd(server), gone::countDown)) {
        assertThat(gone.await(1500, TimeUnit.MILLISECONDS)).as("told while still open").isFalse();
        client.close();
        assertThat(gone.await(30, TimeUnit.SECONDS)).as("told once closed").isTrue();
      }
    }
  }

  @Test
  void aWatchClosedBeforeTheClientGoes_isNeverTold() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(listener.getInetAddress(), listener.getLocalPort());
        Socket server = listener.accept()) {
      CountDownLatch gone = new CountDownLatch(1);
      disconnects.watch(serverEnd(server), gone::countDown).close();
      client.close();
      assertThat(gone.await(2, TimeUnit.SECONDS)).isFalse();
    }
  }

  @Test
  void addressesOfTheTables_areReadInTheHostsByteOrder_andMappedIpv4ComesOutAsIpv4() {
    assertThat(ClientDisconnects.address("0100007F")).isEqualTo(InetAddress.getLoopbackAddress());
    assertThat(ClientDisconnects.address("0000000000000000FFFF00000100007F").getHostAddress())
        .isEqualTo("127.0.0.1");
    assertThat(ClientDisconnects.address("00000000000000000000000001000000").getHostAddress())
        .isEqualTo("0:0:0:0:0:0:0:1");
  }

  private static ClientDisconnects.Connection serverEnd(Socket server) {
    InetSocketAddress remote = (InetSocketAddress) server.getRemoteSocketAddress();
    return new ClientDisconnects.Connection(
        server.getLocalPort(), remote.getAddress(), remote.getPort());
  }
}
