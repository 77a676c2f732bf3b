package dev.box.core.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's side of an exec agent against a hostile agent: a peer on the real socket that says
 * hello and then answers garbage, floods, lies or stays silent, as code in a sandbox could once it
 * has replaced its agent. Each must break the link (which ends the sandbox) or be ignored, and
 * never hang or crash the server's side. The real agent in real sandboxes is tested by the
 * backends.
 */
class AgentLinkTest {
  private static final Duration REPLY = Duration.ofMillis(500);

  @TempDir Path dir;

  private final AtomicInteger broken = new AtomicInteger();

  /** The deadlines of this test's links, as a backend owns them: shut down after each test. */
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stopTimers() {
    timers.shutdownNow();
  }

  /** A link and its agent, which is this test. */
  private record Peer(AgentLink link, SocketChannel agent) implements AutoCloseable {
    @Override
    public void close() throws IOException {
      link.close();
      agent.close();
    }
  }

  /** A link whose agent is this test: it connects and says hello. */
  private Peer connect() throws Exception {
    AgentLink link =
        AgentLink.listen("t", dir.resolve("agent"), "socket", new LinkDeadlines(REPLY, timers));
    CompletableFuture<Void> waiting =
        CompletableFuture.runAsync(
            () -> {
              try {
                link.awaitAgent(Duration.ofSeconds(5), broken::incrementAndGet);
              } catch (IOException e) {
                throw new IllegalStateException(e);
              }
            });
    SocketChannel agent = SocketChannel.open(StandardProtocolFamily.UNIX);
    agent.connect(UnixDomainSocketAddress.of(dir.resolve("agent/socket")));
    write(agent, frame('H', 1, 7));
    waiting.get();
    assertThat(link.usable()).isTrue();
    assertThat(link.agentPid()).isEqualTo(7);
    return new Peer(link, agent);
  }

  private static byte[] frame(char type, int a, int b) {
    return ByteBuffer.allocate(13).putInt(9).put((byte) type).putInt(a).putInt(b).array();
  }

  private static void write(SocketChannel channel, byte[] bytes) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  /** Reads the agent's next request and returns its type. */
  private static byte nextRequest(SocketChannel agent) throws IOException {
    ByteBuffer length = ByteBuffer.allocate(4);
    while (length.hasRemaining()) {
      agent.read(length);
    }
    ByteBuffer body = ByteBuffer.allocate(length.flip().getInt());
    while (body.hasRemaining()) {
      agent.read(body);
    }
    return body.get(0);
  }

  private static CompletableFuture<AgentProcess> spawnAsync(AgentLink link) {
    return CompletableFuture.supplyAsync(
        () ->
            link.spawn(
                List.of("/bin/true"), Map.of("A", "b"), false, null, pid -> {}, new NoTree()));
  }

  @Test
  void aSilentAgent_failsTheStart_andBreaksTheLink() throws Exception {
    try (Peer peer = connect()) {
      CompletableFuture<AgentProcess> start = spawnAsync(peer.link());
      assertThat(nextRequest(peer.agent())).isEqualTo((byte) 'S');

      assertThatThrownBy(start::join)
          .cause()
          .isInstanceOf(BoxException.class)
          .hasMessageContaining("its exec agent did not answer within 500 ms");
      assertThat(((BoxException) start.handle((p, e) -> e.getCause()).get()).code())
          .isEqualTo(BoxErrorCode.RUNTIME_UNAVAILABLE);
      assertThat(broken).hasValue(1);
      assertThat(peer.link().usable()).isFalse();
      assertThat(Files.exists(dir.resolve("agent/socket"))).isFalse();
    }
  }

  @Test
  void garbage_anOversizedFrame_orAnAnswerForNoProcess_eachBreaksTheLink() throws Exception {
    for (byte[] wrong :
        List.of(
            new byte[] {0, 0, 0, 2, 'Z', 0},
            ByteBuffer.allocate(8).putInt(1 << 30).putInt(0).array(),
            frame('X', 12345, 0),
            frame('Q', 1, 1))) {
      broken.set(0);
      try (Peer peer = connect()) {
        write(peer.agent(), wrong);
        await().untilAsserted(() -> assertThat(broken).hasValue(1));
        assertThat(peer.link().usable()).isFalse();
        assertThatThrownBy(() -> spawnAsync(peer.link()).join())
            .cause()
            .isInstanceOf(BoxException.class)
            .hasMessageContaining("the sandbox t ended: its exec agent");
      }
    }
  }

  @Test
  void anAgentThatNamesAProcessTwice_orReportsAnExitBeforeAStart_breaksTheLink() throws Exception {
    try (Peer peer = connect()) {
      CompletableFuture<AgentProcess> start = spawnAsync(peer.link());
      assertThat(nextRequest(peer.agent())).isEqualTo((byte) 'S');
      write(peer.agent(), frame('P', 1, 42));
      write(peer.agent(), frame('P', 1, 43));
      await().untilAsserted(() -> assertThat(broken).hasValue(1));
      assertThatThrownBy(start::join).cause().isInstanceOf(BoxException.class);
    }
  }

  @Test
  void floodingTheSocketWithConnectionsAndGarbage_leavesTheLinkUsable() throws Exception {
    try (Peer peer = connect()) {
      for (int i = 0; i < 200; i++) {
        try (SocketChannel intruder = SocketChannel.open(StandardProtocolFamily.UNIX)) {
          intruder.connect(UnixDomainSocketAddress.of(dir.resolve("agent/socket")));
          write(intruder, new byte[] {0, 0, 0, 14, 'O', 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 1});
        } catch (IOException e) {
          // Connections beyond the bound are closed at once: that is the point.
        }
      }
      assertThat(peer.link().usable()).isTrue();
      assertThat(broken).hasValue(0);
    }
  }

  @Test
  void linksOfTwoOwners_shareNoTimer_soClosingOneLeavesTheOthersDeadlinesRunning()
      throws IOException {
    ScheduledExecutorService mine = Executors.newSingleThreadScheduledExecutor();
    try {
      timers.shutdownNow();
      try (AgentLink closedOwners =
          AgentLink.listen("o", dir.resolve("o"), "socket", new LinkDeadlines(REPLY, timers))) {
        assertThatThrownBy(() -> closedOwners.awaitAgent(REPLY, broken::incrementAndGet))
            .isInstanceOf(RejectedExecutionException.class);
      }
      try (AgentLink own =
          AgentLink.listen("m", dir.resolve("m"), "socket", new LinkDeadlines(REPLY, mine))) {
        // No agent connects: only the deadline, on this owner's timer, can end the wait.
        assertThatThrownBy(() -> own.awaitAgent(REPLY, broken::incrementAndGet))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("no exec agent connected");
      }
    } finally {
      mine.shutdownNow();
    }
  }

  @Test
  void waitStatuses_becomeExitCodes() {
    assertThat(AgentLink.exitCode(0)).isZero();
    assertThat(AgentLink.exitCode(3 << 8)).isEqualTo(3);
    assertThat(AgentLink.exitCode(9)).isEqualTo(137);
    assertThat(AgentLink.exitCode(15 | 0x80)).isEqualTo(143);
  }

  /** The tree of a process no test runs: nothing to kill. */
  private static final class NoTree implements AgentProcess.Tree {
    @Override
    public void terminate() {}

    @Override
    public void kill() {}

    @Override
    public void release() {}
  }
}
