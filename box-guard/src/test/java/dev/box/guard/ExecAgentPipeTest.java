package dev.box.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code box-agent --pipe PORT}, as a pod runs it for a server that reaches the agent
 * through the cluster's API server: its stdin and stdout are one connection to the agent listening
 * on the loopback port, byte for byte, and it ends when the agent closes that connection.
 */
class ExecAgentPipeTest {
  @TempDir Path dir;
  private ListeningAgent agent;
  private Path binary;

  @BeforeEach
  void startAgent() throws Exception {
    agent = ListeningAgent.start(dir.resolve("agent"));
    ExecAgent installed = ExecAgent.install(dir.resolve("pipe"));
    assumeTrue(installed.available(), installed.reason());
    binary = Objects.requireNonNull(installed.binary());
  }

  @AfterEach
  void stop() throws Exception {
    agent.close();
  }

  @Test
  void aControlThroughThePipe_isGreeted_andThePipeEndsWhenTheAgentCloses() throws Exception {
    Process pipe = pipe(Integer.toString(agent.port()));
    OutputStream in = pipe.getOutputStream();
    in.write("BOXA".getBytes(StandardCharsets.US_ASCII));
    in.write(agent.secret());
    in.write('C');
    in.flush();

    DataInputStream out = new DataInputStream(pipe.getInputStream());
    int length = out.readInt();
    byte type = out.readByte();
    int version = out.readInt();
    assertThat(length).isEqualTo(9);
    assertThat((char) type).isEqualTo('H');
    assertThat(version).isEqualTo(1);

    // The end of stdin ends the control; the agent closes it, and the pipe exits.
    in.close();
    assertThat(pipe.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(pipe.exitValue()).isZero();
  }

  @Test
  void aWrongSecretThroughThePipe_isClosedWithoutAWord() throws Exception {
    Process pipe = pipe(Integer.toString(agent.port()));
    OutputStream in = pipe.getOutputStream();
    in.write("BOXA".getBytes(StandardCharsets.US_ASCII));
    byte[] wrong = agent.secret();
    wrong[0] ^= 1;
    in.write(wrong);
    in.write('C');
    in.flush();

    assertThat(pipe.getInputStream().readAllBytes()).isEmpty();
    assertThat(pipe.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(pipe.exitValue()).isZero();
  }

  @Test
  void aPortThatIsNoPort_isRefused() throws Exception {
    for (String bad : List.of("0", "65536", "x", "")) {
      Process pipe = pipe(bad);
      assertThat(pipe.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(pipe.exitValue()).as(bad).isEqualTo(2);
    }
  }

  private Process pipe(String port) throws Exception {
    return new ProcessBuilder(binary.toString(), "--pipe", port)
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
  }
}
