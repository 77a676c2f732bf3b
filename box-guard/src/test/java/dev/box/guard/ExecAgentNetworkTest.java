package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.guard.NetworkAgentClient.Control;
import dev.box.guard.NetworkAgentClient.Frame;
import dev.box.guard.NetworkAgentClient.Started;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
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
 * The real {@code box-agent} in network mode ({@code --listen PORT SECRET_FILE}), on this host and
 * outside any sandbox, with a test that plays the server over loopback TCP: only connections with
 * the secret are served, streams are dialled by the server, every process runs under a keeper that
 * accounts for its whole tree, a process outlives the control that started it until one ends all,
 * and nothing a connection does ends the agent.
 */
class ExecAgentNetworkTest {
  private static final int ETIMEDOUT = 110;
  private static final int ECANCELED = 125;
  private static final int KILLED = 9;
  private static final Duration GENEROUS = Duration.ofSeconds(30);

  @TempDir Path dir;
  private final List<AutoCloseable> opened = new ArrayList<>();
  private final List<Long> pids = new ArrayList<>();
  private byte[] secret = new byte[32];
  private @Nullable ListeningAgent agent;
  private NetworkAgentClient client = new NetworkAgentClient(0, secret, opened);

  @BeforeEach
  void startAgent() throws Exception {
    ListeningAgent started = ListeningAgent.start(dir);
    agent = started;
    secret = started.secret();
    client = new NetworkAgentClient(started.port(), secret, opened);
    await().atMost(GENEROUS).ignoreExceptions().until(this::greetsANewControl);
  }

  @AfterEach
  void stop() throws Exception {
    // Closing the controls leaves their processes running: whatever is left is killed here.
    for (AutoCloseable c : opened) {
      c.close();
    }
    List<ProcessHandle> left = new ArrayList<>();
    if (agent != null) {
      agent.process().descendants().forEach(left::add);
      agent.close();
    }
    pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(left::add));
    left.forEach(ProcessHandle::destroyForcibly);
  }

  @Test
  void aWrongSecret_isClosedWithoutHello() throws Exception {
    byte[] wrong = secret.clone();
    wrong[31] ^= 1;
    Control impostor = new Control(client.dial(wrong, 'C', new byte[0]));

    assertThat(impostor.closedByAgent()).isTrue();
    assertStillServes();
  }

  @Test
  void aControl_getsHelloWithTheAgentsPid() throws Exception {
    Frame hello = client.control().next();

    assertThat(hello)
        .isEqualTo(new Frame('H', 1, (int) Objects.requireNonNull(agent).process().pid()));
  }

  @Test
  void aProcess_writesToItsStreams_thenExitsAndItsTreeEnds() throws Exception {
    Control control = helloed();

    Started p = client.start(control, 7, false, "/bin/sh", "-c", "echo out; echo err >&2; exit 3");
    pids.add((long) p.keeper());

    assertThat(NetworkAgentClient.readAll(p.out())).isEqualTo("out\n");
    assertThat(NetworkAgentClient.readAll(p.err())).isEqualTo("err\n");
    assertThat(control.next()).isEqualTo(new Frame('X', 7, 3 << 8));
    assertThat(control.next()).isEqualTo(new Frame('Q', 7, 0));
  }

  @Test
  void aProcess_readsItsStdinConnection() throws Exception {
    Control control = helloed();

    Started p = client.start(control, 1, true, "/bin/cat");
    pids.add((long) p.keeper());
    Socket in = Objects.requireNonNull(p.in());
    in.getOutputStream().write("through stdin\n".getBytes(StandardCharsets.UTF_8));
    in.shutdownOutput();

    assertThat(NetworkAgentClient.readAll(p.out())).isEqualTo("through stdin\n");
    assertThat(control.next()).isEqualTo(new Frame('X', 1, 0));
    assertThat(control.next()).isEqualTo(new Frame('Q', 1, 0));
  }

  @Test
  void spawnsOneRightAfterAnother_allStart() throws Exception {
    Control control = helloed();

    // Each spawn follows the previous go at once: both frames come before its streams do.
    for (int id = 0; id < 20; id++) {
      pids.add((long) client.start(control, id, false, "/bin/sleep", "1000").keeper());
    }

    control.send('A');
    List<Frame> ends = new ArrayList<>();
    for (Frame f = control.next(); f.type() != 'E'; f = control.next()) {
      ends.add(f);
    }
    assertThat(ends).filteredOn(f -> f.type() == 'Q').hasSize(20);
  }

  @Test
  void aSpawnWhoseStreamsNeverCome_failsWithETIMEDOUT() throws Exception {
    Control control = helloed();

    control.spawn(4, new byte[8], false, "/bin/true");

    assertThat(control.next()).isEqualTo(new Frame('F', 4, ETIMEDOUT));
    assertStillServes();
  }

  @Test
  void kill_endsTheWholeTree_evenWhatWasDoubleForkedAway() throws Exception {
    Control control = helloed();
    Started p =
        client.start(
            control,
            2,
            false,
            "/bin/sh",
            "-c",
            "echo $$; sleep 1000 & echo $!; sleep 1000 & echo $!;"
                + " (setsid sleep 1000 & echo $!); wait");
    pids.add((long) p.keeper());
    List<Long> tree = readPids(p.out(), 4);

    control.send('K', 2);

    assertThat(control.next()).isEqualTo(new Frame('X', 2, KILLED));
    assertThat(control.next()).isEqualTo(new Frame('Q', 2, 0));
    assertThat(tree).noneMatch(ExecAgentNetworkTest::exists);
    assertStillServes();
  }

  @Test
  void kill_ofAnUnknownId_isAnsweredAtOnce() throws Exception {
    Control control = helloed();

    control.send('K', 99);

    assertThat(control.next()).isEqualTo(new Frame('Q', 99, 0));
  }

  @Test
  void aKeeperKilledFromOutside_losesItsTree() throws Exception {
    Control control = helloed();
    Started p = client.start(control, 3, false, "/bin/sh", "-c", "echo $$; exec sleep 1000");
    pids.add((long) p.keeper());
    readPids(p.out(), 1);

    ProcessHandle.of(p.keeper()).ifPresent(ProcessHandle::destroyForcibly);

    assertThat(control.next()).isEqualTo(new Frame('X', 3, KILLED));
    assertThat(control.next()).isEqualTo(new Frame('L', 3, 0));
    assertStillServes();
  }

  @Test
  void twoControls_eachHearOfTheirOwnProcesses_underTheSameId() throws Exception {
    Control first = helloed();
    Control second = helloed();

    pids.add((long) client.start(first, 1, false, "/bin/sh", "-c", "exit 5").keeper());
    pids.add((long) client.start(second, 1, false, "/bin/sh", "-c", "exit 6").keeper());

    assertThat(first.next()).isEqualTo(new Frame('X', 1, 5 << 8));
    assertThat(second.next()).isEqualTo(new Frame('X', 1, 6 << 8));
    assertThat(first.next()).isEqualTo(new Frame('Q', 1, 0));
    assertThat(second.next()).isEqualTo(new Frame('Q', 1, 0));
  }

  @Test
  void aClosedControlsProcess_runsOn_reachedByNoOtherControl_untilEndAll() throws Exception {
    List<Control> others = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      others.add(helloed());
    }
    Control closed = helloed();
    Started p =
        client.start(
            closed,
            1,
            true,
            "/bin/sh",
            "-c",
            "echo $$; sleep 1000 & echo $!; read line; echo \"got $line\"; wait");
    pids.add((long) p.keeper());
    List<Long> tree = readPids(p.out(), 2);

    closed.close();
    // The eighth slot is free again only once the agent has dropped that control.
    others.getFirst().close();
    await().atMost(GENEROUS).ignoreExceptions().until(this::greetsANewControl);
    Control other = helloed();
    other.send('K', 1);

    assertThat(other.next()).isEqualTo(new Frame('Q', 1, 0));
    Socket in = Objects.requireNonNull(p.in());
    in.getOutputStream().write("still here\n".getBytes(StandardCharsets.UTF_8));
    assertThat(lines(p.out()).readLine()).isEqualTo("got still here");
    assertThat(tree).allMatch(ExecAgentNetworkTest::exists);

    other.send('A');

    assertThat(other.next()).isEqualTo(new Frame('E', 0, 0));
    assertThat(tree).noneMatch(ExecAgentNetworkTest::exists);
    assertThat(exists(p.keeper())).isFalse();
    assertStillServes();
  }

  @Test
  void endAll_endsTheTreesOfEveryControl_thenSaysAllEnded() throws Exception {
    Control owner = helloed();
    Control ender = helloed();
    Started p =
        client.start(owner, 5, false, "/bin/sh", "-c", "echo $$; sleep 1000 & echo $!; wait");
    pids.add((long) p.keeper());
    List<Long> tree = readPids(p.out(), 2);
    ender.spawn(6, new byte[8], false, "/bin/true");

    ender.send('A');

    assertThat(ender.next()).isEqualTo(new Frame('F', 6, ECANCELED));
    assertThat(ender.next()).isEqualTo(new Frame('E', 0, 0));
    assertThat(tree).noneMatch(ExecAgentNetworkTest::exists);
    assertThat(owner.next()).isEqualTo(new Frame('X', 5, KILLED));
    assertThat(owner.next()).isEqualTo(new Frame('Q', 5, 0));
  }

  @Test
  void endAll_withNothingRunning_isAnsweredAtOnce() throws Exception {
    Control control = helloed();

    control.send('A');

    assertThat(control.next()).isEqualTo(new Frame('E', 0, 0));
  }

  @Test
  void aBadFrame_closesOnlyItsControl() throws Exception {
    Control bad = helloed();
    Control good = helloed();

    bad.send('Y', 1);

    assertThat(bad.closedByAgent()).isTrue();
    pids.add((long) client.start(good, 1, false, "/bin/true").keeper());
    assertThat(good.next()).isEqualTo(new Frame('X', 1, 0));
  }

  @Test
  void controlsBeyondEight_areClosed_untilOneEnds() throws Exception {
    List<Control> eight = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      eight.add(helloed());
    }

    assertThat(client.control().closedByAgent()).isTrue();
    eight.get(0).close();
    await().atMost(GENEROUS).ignoreExceptions().until(this::greetsANewControl);
  }

  @Test
  void aStreamMatchingNothing_isClosed() throws Exception {
    Socket stray = client.stream(42, new byte[8], 1);

    assertThat(stray.getInputStream().read()).isEqualTo(-1);
    assertStillServes();
  }

  /** A new control whose hello has been read. */
  private Control helloed() throws IOException {
    Control control = client.control();
    hello(control);
    return control;
  }

  /** Reads the hello of {@code control}; the agent's pid. */
  private static int hello(Control control) throws IOException {
    Frame hello = control.next();
    assertThat(hello.type()).isEqualTo('H');
    return hello.value();
  }

  /** The agent is alive and greets a new control. */
  private void assertStillServes() throws IOException {
    assertThat(Objects.requireNonNull(agent).process().isAlive()).isTrue();
    assertThat(greetsANewControl()).isTrue();
  }

  /** Whether a new control gets the agent's hello; the control is closed again. */
  private boolean greetsANewControl() throws IOException {
    Control control = client.control();
    try {
      return hello(control) == Objects.requireNonNull(agent).process().pid();
    } finally {
      control.close();
    }
  }

  /** The first {@code count} lines of {@code stream}, each a pid; each is killed after the test. */
  private List<Long> readPids(Socket stream, int count) throws IOException {
    BufferedReader lines = lines(stream);
    List<Long> read = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      read.add(Long.parseLong(Objects.requireNonNull(lines.readLine())));
    }
    pids.addAll(read);
    return read;
  }

  /** The lines of {@code stream}; a reader buffers, so only what was written since is read. */
  private static BufferedReader lines(Socket stream) throws IOException {
    return new BufferedReader(
        new InputStreamReader(stream.getInputStream(), StandardCharsets.US_ASCII));
  }

  private static boolean exists(long pid) {
    return Files.exists(Path.of("/proc", Long.toString(pid)));
  }
}
