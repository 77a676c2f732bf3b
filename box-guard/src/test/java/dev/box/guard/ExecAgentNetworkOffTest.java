package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.guard.NetworkAgentClient.Control;
import dev.box.guard.NetworkAgentClient.Frame;
import dev.box.guard.NetworkAgentClient.Started;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code box-agent} as a network-off pod runs it, under {@code box-guard --net-off} and
 * its filter, on this host: the agent is reached on the host's loopback, while every process it
 * starts runs in a network namespace of its own with only {@code lo}, which the processes share,
 * and from which none gets back into the agent's network.
 */
class ExecAgentNetworkOffTest {
  private static final Duration GENEROUS = Duration.ofSeconds(30);

  /** Prints the port it listens on at 127.0.0.1, then what the first connection sends. */
  private static final String LISTENER =
      """
      import socket
      s = socket.socket()
      s.bind(('127.0.0.1', 0))
      s.listen(1)
      print(s.getsockname()[1], flush=True)
      print(s.accept()[0].recv(64).decode(), flush=True)
      """;

  @TempDir Path dir;
  private final List<AutoCloseable> opened = new ArrayList<>();
  private @Nullable ListeningAgent agent;
  private NetworkAgentClient client = new NetworkAgentClient(0, new byte[32], opened);

  @BeforeEach
  void startAgent() throws Exception {
    ListeningAgent started = ListeningAgent.startWithoutNetwork(dir);
    agent = started;
    client = new NetworkAgentClient(started.port(), started.secret(), opened);
    await().atMost(GENEROUS).ignoreExceptions().until(() -> helloed() != null);
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : opened) {
      c.close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  @Test
  void aProcess_seesOnlyLoopback_inANamespaceOtherThanTheAgents() throws Exception {
    Control control = helloed();

    String seen =
        run(
            control,
            1,
            "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; readlink /proc/self/ns/net");

    List<String> lines = seen.lines().toList();
    assertThat(lines).hasSize(2);
    assertThat(lines.getFirst()).isEqualTo("lo");
    assertThat(lines.get(1)).isNotEqualTo(netns(agentPid()));
  }

  @Test
  void twoProcesses_shareTheirNamespace_andTalkOverLoopback() throws Exception {
    Control control = helloed();
    Started listener = client.start(control, 1, false, "/usr/bin/python3", "-c", LISTENER);
    BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(listener.out().getInputStream(), StandardCharsets.US_ASCII));
    String port = lines.readLine();

    // Not run(): the two processes' frames interleave as they end.
    Started sender =
        client.start(
            control,
            2,
            false,
            "/usr/bin/python3",
            "-c",
            "import socket; socket.create_connection(('127.0.0.1', "
                + port
                + ")).sendall(b'hello')");

    assertThat(lines.readLine()).isEqualTo("hello");
    assertThat(NetworkAgentClient.readAll(sender.err())).isEmpty();
  }

  @Test
  void aProcess_cannotJoinTheAgentsNetwork_norTheHosts() throws Exception {
    Control control = helloed();
    long agent = agentPid();
    long host = ProcessHandle.current().pid();

    String attempts =
        run(
            control,
            1,
            "for target in /proc/"
                + agent
                + "/ns/net /proc/"
                + host
                + "/ns/net; do nsenter --net=$target true 2>/dev/null; echo $?; done;"
                + " nsenter --user=/proc/"
                + host
                + "/ns/user true 2>/dev/null; echo $?;"
                + " tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");

    assertThat(attempts.lines().toList()).containsExactly("1", "1", "1", "lo");
  }

  /** Runs {@code script} as process {@code id} and returns its stdout once its tree has ended. */
  private String run(Control control, int id, String script) throws Exception {
    Started p = client.start(control, id, false, "/bin/sh", "-c", script);
    String out = NetworkAgentClient.readAll(p.out());
    assertThat(control.next().type()).isEqualTo('X');
    assertThat(control.next()).isEqualTo(new Frame('Q', id, 0));
    return out;
  }

  private Control helloed() throws Exception {
    Control control = client.control();
    assertThat(control.next().type()).isEqualTo('H');
    return control;
  }

  /** The agent's pid: box-guard without --init runs it in its own process. */
  private long agentPid() {
    return Objects.requireNonNull(agent).process().pid();
  }

  private static String netns(long pid) throws Exception {
    return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", "net")).toString();
  }
}
