package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.guard.NetworkAgentClient.Control;
import dev.box.guard.NetworkAgentClient.Frame;
import dev.box.guard.NetworkAgentClient.Started;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * Terminals of the real {@code box-agent} (network mode, on this host over loopback): a spawn with
 * the terminal flag runs on a pseudo-terminal that the agent opens and relays, of the size asked,
 * resized by 'Z', and its exit and tree kill are those of any process.
 */
class ExecAgentTerminalTest extends ListeningAgentCase {
  private static final int KILLED = 9;

  @Test
  void aTerminalProcess_hasATtyOfTheAskedSize_asItsControllingTerminal_withTerm() throws Exception {
    Control control = helloed();
    Started p =
        shell(
            control,
            1,
            132,
            43,
            "tty; stty size; echo TERM=$TERM; [ -t 0 ] && [ -t 2 ] && echo all-ttys;"
                + " : </dev/tty && echo controlling; exit 3");

    String out = NetworkAgentClient.readAll(p.out());

    assertThat(out)
        .contains("/dev/pts/", "43 132\r\n", "TERM=xterm-256color", "all-ttys", "controlling");
    assertThat(NetworkAgentClient.readAll(p.err())).as("stderr is the terminal").isEmpty();
    assertThat(control.next()).isEqualTo(new Frame('X', 1, 3 << 8));
    assertThat(control.next()).isEqualTo(new Frame('Q', 1, 0));
  }

  @Test
  void input_reachesTheTerminal_andResizeChangesItsSize() throws Exception {
    Control control = helloed();
    Started p = shell(control, 2, 80, 24, "stty size; read line; echo got-$line; stty size");
    Socket in = Objects.requireNonNull(p.in());

    assertThat(readUntil(p.out(), "24 80\r\n")).endsWith("24 80\r\n");
    control.resize(2, 120, 40);
    in.getOutputStream().write("hello\r".getBytes(StandardCharsets.US_ASCII));

    String rest = NetworkAgentClient.readAll(p.out());
    assertThat(rest).contains("got-hello\r\n40 120\r\n");
    assertThat(control.next()).isEqualTo(new Frame('X', 2, 0));
  }

  @Test
  void resize_sendsSigwinchToTheForegroundGroup() throws Exception {
    Control control = helloed();
    Started p =
        shell(
            control,
            3,
            80,
            24,
            "trap 'stty size; exit 5' WINCH; echo ready; while :; do sleep 0.1; done");

    readUntil(p.out(), "ready\r\n");
    control.resize(3, 100, 50);

    assertThat(NetworkAgentClient.readAll(p.out())).contains("50 100\r\n");
    assertThat(control.next()).isEqualTo(new Frame('X', 3, 5 << 8));
  }

  @Test
  void kill_endsTheWholeTreeOfATerminal_andItsOutput() throws Exception {
    Control control = helloed();
    Started p = shell(control, 4, 80, 24, "setsid sleep 1000 & echo child=$!; wait");
    String line = readUntil(p.out(), "\r\n");
    long child = Long.parseLong(line.substring(line.indexOf("child=") + 6).strip());
    assertThat(exists(child)).isTrue();

    control.send('K', 4);

    assertThat(control.next()).isEqualTo(new Frame('X', 4, KILLED));
    assertThat(control.next()).isEqualTo(new Frame('Q', 4, 0));
    assertThat(exists(child)).as("the terminal's tree is gone").isFalse();
    NetworkAgentClient.readAll(p.out());
  }

  @Test
  void aTerminalWithoutStdin_isMalformed_andClosesTheControl() throws Exception {
    Control control = helloed();
    control.spawn(
        5, NetworkAgentClient.token(), 4, NetworkAgentClient.terminalSize(80, 24), "/bin/true");

    assertThat(control.closedByAgent()).isTrue();
  }

  /**
   * Starts {@code script} under {@code /bin/sh -c} on a terminal of {@code cols} by {@code rows}.
   */
  private Started shell(Control control, int id, int cols, int rows, String script)
      throws IOException {
    return client.startTerminal(control, id, cols, rows, "/bin/sh", "-c", script);
  }

  /** What {@code stream} carries up to and including the first {@code end}, read byte by byte. */
  private static String readUntil(Socket stream, String end) throws IOException {
    InputStream in = stream.getInputStream();
    StringBuilder read = new StringBuilder();
    while (read.indexOf(end) < 0) {
      int b = in.read();
      assertThat(b).as("the stream ended before %s, after %s", end, read).isNotNegative();
      read.append((char) b);
    }
    return read.toString();
  }

  private static boolean exists(long pid) {
    return Files.exists(Path.of("/proc", Long.toString(pid)));
  }
}
