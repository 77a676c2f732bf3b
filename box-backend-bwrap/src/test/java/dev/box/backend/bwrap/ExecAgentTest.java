package dev.box.backend.bwrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxEgress;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.NamespaceSandbox;
import dev.box.sandbox.SandboxTests;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exec agent in real bubblewrap sandboxes: processes start through it with exact exit codes and
 * their own streams; it is the sandbox's PID 1, which code inside cannot kill; an agent that dies
 * ends its sandbox with a clear error; and a sandbox that floods the agent's socket harms nothing.
 * The conformance suite checks everything else through the agent.
 */
class ExecAgentTest {
  @TempDir Path dataDir;

  /** Runs {@code body} in a sandbox of {@link #spec} on a backend of its own, without a pool. */
  private void inASandbox(SandboxTests.Body body) throws Exception {
    try (BwrapBackend backend = SandboxPoolTest.backend(dataDir, "inst", 0)) {
      SandboxTests.inSandbox(backend, spec(), body);
    }
  }

  private static SandboxSpec spec() {
    return new SandboxSpec(
        "s1",
        "inst_s1",
        "inst",
        "img",
        BoxNetworkMode.OFF,
        null,
        List.of(),
        false,
        1.0,
        256,
        64,
        BoxEgress.NONE,
        false,
        null);
  }

  private static SandboxProcess start(Sandbox sandbox, String script, boolean stdin) {
    return sandbox.spawn(new ProcessSpec(new ProcessSpec.Shell(script), "/tmp", Map.of(), stdin));
  }

  private static String read(java.io.InputStream in) throws IOException {
    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
  }

  /** Runs {@code script} and returns its stdout and stderr together and its exit code. */
  private static String run(Sandbox sandbox, String script) throws Exception {
    SandboxProcess p = start(sandbox, "{ " + script + "\n} 2>&1", false);
    try {
      String out = read(p.stdout());
      return out + "exit=" + p.waitFor(Duration.ofSeconds(30)).orElse(-1);
    } finally {
      p.release();
    }
  }

  @Test
  void processesGetTheirOwnStreams_stdinWhenAsked_andExactExitCodes() throws Exception {
    inASandbox(
        sandbox -> {
          SandboxProcess p = start(sandbox, "cat; echo err >&2; exit 3", true);
          try (OutputStream in = p.stdin()) {
            in.write("hello\n".getBytes(StandardCharsets.UTF_8));
          }
          assertThat(read(p.stdout())).isEqualTo("hello\n");
          assertThat(read(p.stderr())).isEqualTo("err\n");
          assertThat(p.waitFor(Duration.ofSeconds(30))).isEqualTo(OptionalInt.of(3));
          p.release();

          assertThat(run(sandbox, "kill -9 $$")).isEqualTo("exit=137");
          // The agent is the sandbox's first process, which made the home as the sandbox user.
          assertThat(run(sandbox, "tr -d '\\000' < /proc/1/cmdline; echo; id -u; stat -c %a:%u ~"))
              .isEqualTo(
                  "/.box/box-agent--home/home/box/.box/agent/socket\n1000\n700:1000\nexit=0");
        });
  }

  @Test
  void codeInTheSandbox_cannotKillItsAgent() throws Exception {
    inASandbox(
        sandbox -> {
          assertThat(run(sandbox, "kill -KILL 1; kill -TERM 1; kill -STOP 1; echo sent"))
              .isEqualTo("sent\nexit=0");
          assertThat(run(sandbox, "echo still")).isEqualTo("still\nexit=0");
          assertThat(sandbox.isAlive()).isTrue();
        });
  }

  @Test
  void anAgentThatDies_endsItsSandbox_andTheRunningProcessFailsWithAClearError() throws Exception {
    inASandbox(
        s -> {
          NamespaceSandbox sandbox = (NamespaceSandbox) s;
          SandboxProcess sleeping = start(sandbox, "sleep 60", false);
          ProcessHandle.of(sandbox.initPid()).orElseThrow().destroyForcibly();

          assertThatThrownBy(() -> sleeping.waitFor(Duration.ofSeconds(30)))
              .isInstanceOf(BoxException.class)
              .hasMessageContaining("its exec agent closed its connection")
              .extracting(e -> ((BoxException) e).code())
              .isEqualTo(BoxErrorCode.RUNTIME_UNAVAILABLE);
          await().untilAsserted(() -> assertThat(sandbox.isAlive()).isFalse());
          assertThatThrownBy(() -> start(sandbox, "true", false))
              .isInstanceOf(BoxException.class)
              .hasMessageContaining("is not running");
          assertThat(sandbox.jail().isAlive()).isFalse();
        });
  }

  @Test
  void aSandboxThatFloodsItsAgentsSocket_harmsNothing() throws Exception {
    inASandbox(
        sandbox -> {
          String flood =
              "import socket\n"
                  + "n = 0\n"
                  + "for i in range(500):\n"
                  + "    s = socket.socket(socket.AF_UNIX)\n"
                  + "    try:\n"
                  + "        s.connect('/.box/agent/socket')\n"
                  + "        s.sendall(b'\\x00\\x00\\x00\\x0eO' + bytes(13) + b'garbage' * 100)\n"
                  + "        n += 1\n"
                  + "    except OSError:\n"
                  + "        pass\n"
                  + "    s.close()\n"
                  + "print('connected', n > 0)\n";
          assertThat(
                  run(
                      sandbox,
                      "python3 -c \"$FLOOD\"".replace("$FLOOD", flood.replace("\"", "\\\""))))
              .isEqualTo("connected True\nexit=0");
          assertThat(run(sandbox, "echo fine")).isEqualTo("fine\nexit=0");
        });
  }
}
