package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.internal.TerminalProtocol;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The terminal WebSocket ({@code GET /v1/sessions/{id}/terminal}) through the real server, on the
 * backend of {@link #box}: a real pseudo-terminal in the sandbox, its size set and changed, its
 * exit reported, and its tree killed when the client goes away. Output is matched by what only the
 * shell's evaluation prints ({@code $(...)} expanded between markers), never by the terminal's echo
 * of what the test typed.
 */
abstract class TerminalContract {
  /** The server the tests run against, started on one backend for the whole class. */
  abstract TestServer box();

  @Test
  void aTerminal_isAPtyOfTheAskedSize_thatResizes_andEndsWithTheExitCode() {
    String session = "term-size";
    assertThat(box().exec(session, "true").status()).isEqualTo(200);
    try (BoxSocket socket = open(session, 100, 30)) {
      Screen screen = new Screen(socket);

      type(socket, "echo \"T=$(tty)=E S=$(stty size)=E V=$TERM=E\"\n");
      assertThat(screen.await("T=(/dev/pts/\\d+)=E")).startsWith("/dev/pts/");
      assertThat(screen.await("S=(\\d+ \\d+)=E")).isEqualTo("30 100");
      assertThat(screen.await("V=([^=]*)=E")).isEqualTo("xterm-256color");

      socket.send(TerminalProtocol.resizeFrame(new TerminalProtocol.Size(120, 40)));
      type(socket, "echo \"R=$(stty size)=E\"\n");
      assertThat(screen.await("R=(\\d+ \\d+)=E")).isEqualTo("40 120");

      type(socket, "exit 7\n");
      assertThat(screen.exitCode()).isEqualTo(7);
      BoxSocket.Close close = socket.nextClose();
      assertThat(close.code()).isEqualTo(TerminalProtocol.NORMAL_CLOSURE);
    }
  }

  @Test
  void aClientThatGoesAway_killsTheTerminalsWholeTree() {
    String session = "term-gone";
    assertThat(box().exec(session, "true").status()).isEqualTo(200);
    String pid;
    try (BoxSocket socket = open(session, 80, 24)) {
      Screen screen = new Screen(socket);
      // Its own session and no terminal: only the kill of the whole tree reaches it.
      type(socket, "(setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo \"P=$(echo $!)=E\")\n");
      pid = screen.await("P=(\\d+)=E");
      assertThat(alive(session, pid)).isTrue();
    }

    await().atMost(Duration.ofSeconds(30)).until(() -> !alive(session, pid));
  }

  @Test
  void aTextFrameThatIsNoResize_closesWithPolicyViolation() {
    String session = "term-bad-frame";
    assertThat(box().exec(session, "true").status()).isEqualTo(200);
    try (BoxSocket socket = open(session, 80, 24)) {
      socket.send("{\"type\":\"resize\",\"cols\":0,\"rows\":24}");

      BoxSocket.Close close = closeAfterOutput(socket);
      assertThat(close.code()).isEqualTo(TerminalProtocol.POLICY_VIOLATION);
      assertThat(close.reason()).contains("validation_error", "cols and rows must be 1 to 1000");
    }
  }

  @Test
  void badSizes_unknownSessions_andMissingTokens_areRefusedBeforeTheUpgrade() {
    String session = "term-refused";
    assertThat(box().exec(session, "true").status()).isEqualTo(200);
    String path = "/v1/sessions/" + session + "/terminal";

    for (String query : new String[] {"?cols=0", "?rows=1001", "?cols=wide", "?cols=80&rows=-1"}) {
      Answer bad = WsClient.refusal(box(), path + query);
      assertThat(bad.status()).as(query).isEqualTo(400);
      assertThat(bad.errorCode()).as(query).isEqualTo("validation_error");
    }
    Answer missing = WsClient.refusal(box(), "/v1/sessions/no-such-session/terminal");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.errorCode()).isEqualTo("session_not_found");
    Answer stranger = WsClient.refusal(box(), path, Map.of());
    assertThat(stranger.status()).isEqualTo(401);
  }

  @Test
  void health_saysTheBackendHasTerminals() {
    assertThat(box().get("/v1/health").body().path("capabilities").toString())
        .contains("\"terminal\"");
  }

  private BoxSocket open(String session, int cols, int rows) {
    return WsClient.connect(
        box(), "/v1/sessions/" + session + "/terminal?cols=" + cols + "&rows=" + rows);
  }

  private boolean alive(String session, String pid) {
    return box()
        .exec(session, "kill -0 " + pid + " 2>/dev/null && echo alive || echo gone")
        .stdout()
        .strip()
        .equals("alive");
  }

  private static void type(BoxSocket socket, String keys) {
    socket.sendBinary(keys.getBytes(StandardCharsets.UTF_8));
  }

  /** The next close, after whatever output came before it. */
  private static BoxSocket.Close closeAfterOutput(BoxSocket socket) {
    while (true) {
      BoxSocket.Frame frame = socket.next();
      if (frame instanceof BoxSocket.Close close) {
        return close;
      }
    }
  }

  /** What a terminal socket has shown so far, read frame by frame as the tests wait for it. */
  private static final class Screen {
    private final BoxSocket socket;
    private final StringBuilder shown = new StringBuilder();
    private int searchedTo;

    Screen(BoxSocket socket) {
      this.socket = socket;
    }

    /** The first group of the next match of {@code regex} after the last one awaited. */
    String await(String regex) {
      Pattern pattern = Pattern.compile(regex);
      while (true) {
        Matcher m = pattern.matcher(shown);
        if (m.find(searchedTo)) {
          searchedTo = m.end();
          return m.group(1);
        }
        BoxSocket.Frame frame = socket.next();
        if (!(frame instanceof BoxSocket.Binary binary)) {
          throw new AssertionError("expected output, got " + frame + " after " + shown);
        }
        shown.append(new String(binary.bytes(), StandardCharsets.UTF_8));
      }
    }

    /** The exit code of the exit frame, after whatever output came before it. */
    int exitCode() {
      while (true) {
        BoxSocket.Frame frame = socket.next();
        if (frame instanceof BoxSocket.Text text) {
          Integer code = TerminalProtocol.exitCode(text.text());
          if (code == null) {
            throw new AssertionError("expected the exit frame, got " + text.text());
          }
          return code;
        }
        if (!(frame instanceof BoxSocket.Binary)) {
          throw new AssertionError("expected the exit frame, got " + frame + " after " + shown);
        }
      }
    }
  }
}
