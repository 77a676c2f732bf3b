package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.guard.NetworkAgentClient.Control;
import dev.box.guard.NetworkAgentClient.Frame;
import dev.box.guard.NetworkAgentClient.Started;
import dev.box.guard.NetworkAgentClient.Streams;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Held processes of the real {@code box-agent} in network mode, on this host over loopback: the
 * agent keeps their stdio pipes and relays them to whichever stream connections are current, so
 * that a new control can reattach to a process whose control ended, and nothing the process writes
 * is lost on the way.
 */
class ExecAgentHeldTest extends ListeningAgentCase {
  /** How many processes the agent holds at once. */
  private static final int MAX_HELD = 64;

  private static final int KILLED = 9;
  private static final int ENOENT = 2;
  private static final int EAGAIN = 11;
  private static final int EBUSY = 16;

  /** The token of the held process a test spawns (a fresh one for each test). */
  private final byte[] token = NetworkAgentClient.token();

  @Test
  void heldCat_echoesItsStdin_andInputEndEndsIt_afterTheLastByte() throws Exception {
    Control control = helloed();
    Started cat = heldCat(control);
    Socket stdin = Objects.requireNonNull(cat.in());
    OutputStream in = stdin.getOutputStream();

    in.write(ascii("first\n"));
    assertThat(read(cat.out(), 6)).isEqualTo("first\n");
    in.write(ascii("last\n"));
    control.send('I', 1);
    stdin.close();

    assertEnded(control, 1, 0);
    assertThat(NetworkAgentClient.readAll(cat.out())).isEqualTo("last\n");
    assertThat(NetworkAgentClient.readAll(cat.err())).isEmpty();
  }

  @Test
  void theEndOfAStdinConnection_isNotTheEndOfInput_untilInputEnd() throws Exception {
    Control control = helloed();
    Started p =
        client.startHeld(control, 2, token, true, "/bin/sh", "-c", "cat; echo end of input");

    Socket first = Objects.requireNonNull(p.in());
    first.getOutputStream().write(ascii("a\n"));
    first.close();
    assertThat(read(p.out(), 2)).isEqualTo("a\n");
    // Its relay has no stdin connection now: a new one for the same process takes its place.
    Socket second = client.stream(2, token, 0);
    second.getOutputStream().write(ascii("b\n"));
    // Back again: the agent has the new connection, so that 'I' ends the input after it.
    assertThat(read(p.out(), 2)).isEqualTo("b\n");
    second.close();
    control.send('I', 2);

    assertThat(NetworkAgentClient.readAll(p.out())).isEqualTo("end of input\n");
    assertEnded(control, 2, 0);
  }

  @Test
  void output_survivesTheControlsEnd_andGoesOnFromWhereTheFirstConnectionStopped()
      throws Exception {
    Control first = helloed();
    String all = seq(2_000_000);
    Started p = client.startHeld(first, 1, token, false, "/usr/bin/seq", "1", "2000000");
    String before = read(p.out(), 100_000);

    first.close();
    // Whatever the agent wrote to the first connection still arrives, then it is closed.
    String firstCarried = before + NetworkAgentClient.readAll(p.out());
    Control second = helloed();
    second.reattach(7, token);

    assertThat(second.next()).isEqualTo(new Frame('P', 7, p.keeper()));
    long offset = second.written(7);
    Streams again = client.streams(7, token, false);
    String rest = NetworkAgentClient.readAll(again.out());
    assertThat((long) firstCarried.length()).isLessThanOrEqualTo(offset);
    assertThat(all).startsWith(firstCarried);
    assertThat(rest).isEqualTo(all.substring((int) offset));
    assertThat(offset).isLessThan(all.length());
    assertThat(NetworkAgentClient.readAll(again.err())).isEmpty();
    assertEnded(second, 7, 0);
  }

  @Test
  void heldCat_survivesItsControl_andLosesNoInputWrittenJustBeforeItEnded() throws Exception {
    Control first = helloed();
    Started cat = heldCat(first);
    Socket oldIn = Objects.requireNonNull(cat.in());
    oldIn.getOutputStream().write(ascii("one\n"));
    assertThat(read(cat.out(), 4)).isEqualTo("one\n");

    oldIn.getOutputStream().write(ascii("two\n"));
    oldIn.close();
    first.close();
    String oldOut = "one\n" + NetworkAgentClient.readAll(cat.out());
    Control second = helloed();
    second.reattach(3, token);

    assertThat(second.next()).isEqualTo(new Frame('P', 3, cat.keeper()));
    assertThat(second.written(3)).isEqualTo(oldOut.length());
    Streams again = client.streams(3, token, true);
    Socket newIn = Objects.requireNonNull(again.in());
    newIn.getOutputStream().write(ascii("three\n"));
    String expected = "one\ntwo\nthree\n";
    // Once it has come back, the agent has the new stdin connection, and 'I' ends after it.
    String newOut = read(again.out(), expected.length() - oldOut.length());
    second.send('I', 3);
    newIn.close();
    assertThat(oldOut + newOut).isEqualTo(expected);
    assertThat(NetworkAgentClient.readAll(again.out())).isEmpty();
    assertEnded(second, 3, 0);
  }

  @Test
  void inputEnd_sentRightAfterAReattach_waitsForTheNewStdinConnection() throws Exception {
    Control first = helloed();
    Started cat = heldCat(first);
    first.close();
    NetworkAgentClient.readAll(cat.out());
    Control second = helloed();
    second.reattach(2, token);
    assertThat(second.next()).isEqualTo(new Frame('P', 2, cat.keeper()));
    assertThat(second.written(2)).isZero();

    // 'I' is served before the agent takes the stdin connection dialled after it.
    second.send('I', 2);
    Streams again = client.streams(2, token, true);
    Socket newIn = Objects.requireNonNull(again.in());
    newIn.getOutputStream().write(ascii("late\n"));
    newIn.close();

    assertThat(NetworkAgentClient.readAll(again.out()))
        .as("what came on the new connection is input all the same")
        .isEqualTo("late\n");
    assertEnded(second, 2, 0);
  }

  @Test
  void reattach_ofAnUnknownToken_failsWithENOENT_andOfAnOwnedProcess_withEBUSY() throws Exception {
    Control owner = helloed();
    Control other = helloed();
    client.startHeld(owner, 1, token, false, "/bin/sleep", "1000");

    other.reattach(1, NetworkAgentClient.token());
    assertThat(other.next()).isEqualTo(new Frame('F', 1, ENOENT));
    other.reattach(2, token);
    assertThat(other.next()).isEqualTo(new Frame('F', 2, EBUSY));
    owner.reattach(3, token);
    assertThat(owner.next()).isEqualTo(new Frame('F', 3, EBUSY));
  }

  @Test
  void aHeldProcessThatEndedOrphaned_isReattachedWithItsExit_andItsOutputFollows()
      throws Exception {
    Control first = helloed();
    String all = seq(10_000);
    Started p =
        client.startHeld(first, 1, token, true, "/bin/sh", "-c", "read go; seq 1 10000; exit 3");
    // Nothing reads its output any more when it starts writing.
    p.out().close();
    p.err().close();
    Socket in = Objects.requireNonNull(p.in());
    in.getOutputStream().write(ascii("go\n"));
    in.close();
    first.close();
    await().atMost(GENEROUS).until(() -> !exists(p.keeper()));
    Control second = helloed();
    second.reattach(5, token);

    assertThat(second.next()).isEqualTo(new Frame('P', 5, p.keeper()));
    long offset = second.written(5);
    assertEnded(second, 5, 3 << 8);
    Streams again = client.streams(5, token, true);
    String rest = NetworkAgentClient.readAll(again.out());
    assertThat(rest).isNotEmpty().isEqualTo(all.substring((int) offset));
    assertThat(NetworkAgentClient.readAll(again.err())).isEmpty();
  }

  @Test
  void kill_ofAReattachedProcess_endsItsTree() throws Exception {
    Control first = helloed();
    Started p =
        client.startHeld(
            first, 1, token, false, "/bin/sh", "-c", "echo $$; sleep 1000 & echo $!; wait");
    List<Long> tree = pids(p.out(), 2);
    first.close();
    Control second = helloed();
    second.reattach(2, token);
    assertThat(second.next()).isEqualTo(new Frame('P', 2, p.keeper()));
    second.written(2);

    second.send('K', 2);

    assertEnded(second, 2, KILLED);
    assertThat(tree).noneMatch(ExecAgentHeldTest::exists);
    assertThat(exists(p.keeper())).isFalse();
  }

  @Test
  void endAll_withHeldOrphans_saysAllEnded_leavesNoProcess_andForgetsThem() throws Exception {
    Control first = helloed();
    List<byte[]> tokens = List.of(NetworkAgentClient.token(), NetworkAgentClient.token());
    List<Long> tree = new ArrayList<>();
    for (int i = 0; i < tokens.size(); i++) {
      Started p =
          client.startHeld(
              first,
              i,
              tokens.get(i),
              true,
              "/bin/sh",
              "-c",
              "echo $$; sleep 1000 & echo $!; wait");
      tree.add((long) p.keeper());
      tree.addAll(pids(p.out(), 2));
    }
    first.close();
    Control ender = helloed();

    ender.send('A');

    assertThat(ender.next()).isEqualTo(new Frame('E', 0, 0));
    assertThat(tree).noneMatch(ExecAgentHeldTest::exists);
    ender.reattach(1, tokens.getFirst());
    assertThat(ender.next()).isEqualTo(new Frame('F', 1, ENOENT));
  }

  @Test
  void aHeldSpawnBeyondSixtyFour_failsWithEAGAIN_whileOthersStillRun() throws Exception {
    Control control = helloed();
    for (int id = 0; id < MAX_HELD; id++) {
      client.startHeld(control, id, NetworkAgentClient.token(), false, "/bin/sleep", "1000");
    }

    control.spawn(MAX_HELD, NetworkAgentClient.token(), 2, "/bin/true");

    assertThat(control.next()).isEqualTo(new Frame('F', MAX_HELD, EAGAIN));
    client.start(control, MAX_HELD + 1, false, "/bin/true");
    assertThat(control.next()).isEqualTo(new Frame('X', MAX_HELD + 1, 0));
    control.send('A');
    List<Frame> ends = new ArrayList<>();
    for (Frame f = control.next(); f.type() != 'E'; f = control.next()) {
      ends.add(f);
    }
    assertThat(ends).contains(new Frame('Q', MAX_HELD + 1, 0));
    assertThat(ends).filteredOn(f -> f.type() == 'X').hasSize(MAX_HELD);
  }

  /** Asserts the next frames of {@code control}: 'X' of {@code id} with {@code status}, 'Q'. */
  private static void assertEnded(Control control, int id, int status) throws IOException {
    assertThat(control.next()).isEqualTo(new Frame('X', id, status));
    assertThat(control.next()).isEqualTo(new Frame('Q', id, 0));
  }

  /** What {@code seq 1 last} prints. */
  private static String seq(int last) {
    return IntStream.rangeClosed(1, last)
        .mapToObj(Integer::toString)
        .collect(Collectors.joining("\n", "", "\n"));
  }

  /** Exactly {@code count} bytes of {@code stream}, as ASCII. */
  private static String read(Socket stream, int count) throws IOException {
    byte[] got = stream.getInputStream().readNBytes(count);
    assertThat(got).hasSize(count);
    return new String(got, StandardCharsets.US_ASCII);
  }

  /** The first {@code count} lines of {@code stream}, each a pid, read byte by byte. */
  private static List<Long> pids(Socket stream, int count) throws IOException {
    InputStream in = stream.getInputStream();
    List<Long> read = new ArrayList<>();
    StringBuilder line = new StringBuilder();
    while (read.size() < count) {
      int b = in.read();
      assertThat(b).isNotNegative();
      if (b == '\n') {
        read.add(Long.parseLong(line.toString()));
        line.setLength(0);
      } else {
        line.append((char) b);
      }
    }
    return read;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  private static boolean exists(long pid) {
    return Files.exists(Path.of("/proc", Long.toString(pid)));
  }

  /** Starts {@code /bin/cat} as held process 1 of {@code control}, its stdin open. */
  private Started heldCat(Control control) throws IOException {
    return client.startHeld(control, 1, token, true, "/bin/cat");
  }
}
