package dev.box.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxManagedProcessConflictException;
import dev.box.core.agent.AgentAddress;
import dev.box.core.agent.AgentLink;
import dev.box.core.agent.AgentProcess;
import dev.box.core.agent.LinkDeadlines;
import dev.box.guard.ListeningAgent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's side of an agent in network mode, as the backend uses it in a pod: the real {@code
 * box-agent --listen} on loopback, dialled by {@link AgentLink#dial}.
 */
class AgentDialTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  @TempDir Path dir;
  private final List<AgentLink> links = new ArrayList<>();
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
  private ListeningAgent agent;
  private byte[] secret = new byte[0];

  @BeforeEach
  void startAgent() throws IOException {
    agent = ListeningAgent.start(dir);
    secret = agent.secret();
    await().atMost(Duration.ofSeconds(10)).until(this::listening);
  }

  @AfterEach
  void stopAgent() throws InterruptedException {
    links.forEach(AgentLink::close);
    timers.shutdownNow();
    agent.close();
  }

  private boolean listening() {
    try (var s = new java.net.Socket(InetAddress.getLoopbackAddress(), agent.port())) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private AgentLink link(byte[] key, Runnable onBroken) throws IOException {
    AgentLink link =
        AgentLink.dial(
            "pod-1",
            new AgentAddress(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), agent.port()), key),
            new LinkDeadlines(TIMEOUT, timers));
    links.add(link);
    link.awaitAgent(TIMEOUT, onBroken);
    return link;
  }

  @Test
  void aProcessRunsWithItsStreams_andItsExitCodeComesBack() throws Exception {
    AgentLink link = link(secret, () -> {});
    AgentProcess p =
        link.spawn(
            List.of("/bin/sh", "-c", "read x; echo out $x; echo err >&2; exit 3"),
            Map.of(),
            true,
            false);
    p.stdin().write("in\n".getBytes(StandardCharsets.UTF_8));
    p.stdin().close();
    assertThat(new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("out in\n");
    assertThat(new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("err\n");
    assertThat(p.waitFor(TIMEOUT)).hasValue(3);
    assertThat(link.usable()).isTrue();
  }

  @Test
  void killingATreeEndsEverythingItStarted_detachedChildrenToo() throws Exception {
    AgentLink link = link(secret, () -> {});
    AgentProcess p =
        link.spawn(
            List.of(
                "/bin/sh",
                "-c",
                "sleep 1000 & echo $!; setsid sh -c 'sleep 1000 & echo $!; wait' & wait"),
            Map.of(),
            false,
            false);
    var out =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(p.stdout(), StandardCharsets.UTF_8));
    long first = Long.parseLong(out.readLine().strip());
    long detached = Long.parseLong(out.readLine().strip());
    assertThat(ProcessHandle.of(first)).isPresent();
    assertThat(ProcessHandle.of(detached)).isPresent();

    try {
      p.killTree();

      assertThat(ProcessHandle.of(first).filter(ProcessHandle::isAlive)).isEmpty();
      assertThat(ProcessHandle.of(detached).filter(ProcessHandle::isAlive)).isEmpty();
    } finally {
      // Whatever the kill missed must not outlive the test: other suites count host processes.
      ProcessHandle.of(first).ifPresent(ProcessHandle::destroyForcibly);
      ProcessHandle.of(detached).ifPresent(ProcessHandle::destroyForcibly);
    }
    assertThat(p.waitFor(TIMEOUT)).isPresent();
    assertThat(link.usable()).isTrue();
    AgentProcess next = link.spawn(List.of("/bin/echo", "still here"), Map.of(), false, false);
    assertThat(new String(next.stdout().readAllBytes(), StandardCharsets.UTF_8))
        .isEqualTo("still here\n");
  }

  @Test
  void aClosedLinksProcessRunsOn_untilAnotherLinkEndsAll() throws Exception {
    AgentLink first = link(secret, () -> {});
    AgentProcess p =
        first.spawn(List.of("/bin/sh", "-c", "echo $$; exec sleep 1000"), Map.of(), false, false);
    var out =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(p.stdout(), StandardCharsets.UTF_8));
    long shell = Long.parseLong(out.readLine().strip());
    try {
      first.close();
      AgentLink second = link(secret, () -> {});
      // The second link's processes start and end while the first's runs on.
      AgentProcess echo = second.spawn(List.of("/bin/echo", "second"), Map.of(), false, false);
      assertThat(echo.waitFor(TIMEOUT)).hasValue(0);
      assertThat(ProcessHandle.of(shell).filter(ProcessHandle::isAlive)).isPresent();

      assertThat(second.endAll()).isTrue();

      assertThat(ProcessHandle.of(shell).filter(ProcessHandle::isAlive)).isEmpty();
      assertThat(second.usable()).isTrue();
    } finally {
      ProcessHandle.of(shell).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  @Test
  void aHeldProcessOutlivesItsLink_andAnotherLinkTakesItOver() throws Exception {
    AgentLink first = link(secret, () -> {});
    AgentProcess cat = first.spawn(List.of("/bin/cat"), Map.of(), true, true);
    String handle = Objects.requireNonNull(cat.handle());
    send(cat, "one\n");
    assertThat(lines(cat).readLine()).isEqualTo("one");
    AgentLink second = link(secret, () -> {});
    assertThatThrownBy(() -> second.reattach(handle))
        .as("a live link holds it")
        .isInstanceOf(BoxManagedProcessConflictException.class);

    cat.detach();
    first.close();
    AgentProcess again = reattach(second, handle);
    assertThat(again.stdoutOffset()).isEqualTo(4);
    send(again, "two\n");
    BufferedReader out = lines(again);
    assertThat(out.readLine()).isEqualTo("two");
    again.stdin().close();
    assertThat(again.waitFor(TIMEOUT)).as("closing stdin ends cat").hasValue(0);
    assertThat(out.readLine()).isNull();
    // The agent keeps an ended process until the last of its output is sent, stderr too.
    await()
        .atMost(Duration.ofSeconds(10))
        .alias("an ended process is gone")
        .ignoreException(BoxManagedProcessConflictException.class)
        .until(() -> second.reattach(handle) == null);
    assertThat(second.usable()).isTrue();
  }

  @Test
  void whatAHeldProcessWritesWhileNoLinkRelaysIt_comesToTheNextLink() throws Exception {
    AgentLink first = link(secret, () -> {});
    AgentProcess p =
        first.spawn(
            List.of("/bin/sh", "-c", "read go; seq 1 100000; read end"), Map.of(), true, true);
    String handle = Objects.requireNonNull(p.handle());
    send(p, "go\n");
    p.detach();
    first.close();

    AgentLink second = link(secret, () -> {});
    AgentProcess again = reattach(second, handle);
    String whole =
        java.util.stream.IntStream.rangeClosed(1, 100000)
            .mapToObj(i -> i + "\n")
            .collect(java.util.stream.Collectors.joining());
    long offset = again.stdoutOffset();
    assertThat(offset).isBetween(0L, (long) whole.length());
    send(again, "end\n");
    String rest = new String(again.stdout().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(rest)
        .as("the output from the offset on, none of it dropped")
        .isEqualTo(whole.substring((int) offset));
    assertThat(again.waitFor(TIMEOUT)).hasValue(0);
  }

  @Test
  void aHandleTheAgentDoesNotHold_isNoProcess() throws Exception {
    AgentLink link = link(secret, () -> {});
    AgentProcess plain = link.spawn(List.of("/bin/sleep", "1000"), Map.of(), false, false);
    assertThat(plain.handle()).as("a process that is not held").isNull();
    assertThat(link.reattach("0123456789abcdef")).isNull();
    assertThat(link.reattach("not a handle")).isNull();
    plain.killTree();
    assertThat(link.usable()).isTrue();
  }

  /** Reattaches once the agent has seen the link that held the process end (it ends apart). */
  private static AgentProcess reattach(AgentLink link, String handle) {
    return await()
        .atMost(Duration.ofSeconds(10))
        .ignoreException(BoxManagedProcessConflictException.class)
        .until(() -> link.reattach(handle), Objects::nonNull);
  }

  private static void send(AgentProcess p, String text) throws IOException {
    p.stdin().write(text.getBytes(StandardCharsets.UTF_8));
    p.stdin().flush();
  }

  private static BufferedReader lines(AgentProcess p) {
    return new BufferedReader(new InputStreamReader(p.stdout(), StandardCharsets.UTF_8));
  }

  @Test
  void aWrongSecretGetsNoAgent() {
    byte[] wrong = secret.clone();
    wrong[0] ^= 1;
    assertThatThrownBy(() -> link(wrong, () -> {})).isInstanceOf(IOException.class);
  }

  @Test
  void aTreeTheSandboxTookAwayEndsTheLink() throws Exception {
    AtomicBoolean broken = new AtomicBoolean();
    AgentLink link = link(secret, () -> broken.set(true));
    AgentProcess p =
        link.spawn(List.of("/bin/sh", "-c", "echo $PPID $$; sleep 1000"), Map.of(), false, false);
    var out =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(p.stdout(), StandardCharsets.UTF_8));
    String[] pids = out.readLine().strip().split(" ");
    // Without its keeper the shell is an orphan of the host's init: the test ends it itself.
    ProcessHandle shell = ProcessHandle.of(Long.parseLong(pids[1])).orElseThrow();
    try {
      ProcessHandle.of(Long.parseLong(pids[0])).orElseThrow().destroyForcibly();

      await().atMost(Duration.ofSeconds(10)).untilTrue(broken);
      assertThat(link.usable()).isFalse();
    } finally {
      shell.descendants().forEach(ProcessHandle::destroyForcibly);
      shell.destroyForcibly();
    }
  }
}
