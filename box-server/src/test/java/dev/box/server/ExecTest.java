package dev.box.server;

import static dev.box.server.ErrorAnswers.assertError;
import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import dev.box.testclient.HostProcesses;
import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Exec through the real server in real bubblewrap sandboxes. */
class ExecTest {
  @AutoClose private static final TestServer box = TestServer.start("max_output_bytes", "65536");

  @Test
  void exec_returnsStdoutStderrAndExitCodeAsProduced() {
    Answer a = box.exec("basics", "echo '  out  '; echo err >&2; exit 3");

    assertThat(a.status()).isEqualTo(200);
    assertThat(a.text("status")).isEqualTo("completed");
    assertThat(a.body().path("exit_code").asInt()).isEqualTo(3);
    assertThat(a.text("stdout")).isEqualTo("  out  \n");
    assertThat(a.text("stderr")).isEqualTo("err\n");
    assertThat(a.body().path("ok").asBoolean()).isFalse();
    assertThat(a.text("session_id")).isEqualTo("basics");
    assertThat(a.text("backend_name")).isEqualTo("bwrap");
    assertThat(a.body().has("duration_ms")).isTrue();
    assertThat(box.exec("basics", "true").body().path("ok").asBoolean()).isTrue();
  }

  @Test
  void exec_runsUnderShInAWorkdirCreatedOnDemand() {
    Answer a = box.exec("workdir", "pwd; echo $0", "\"workdir\":\"/workspace/a/b\"");

    assertThat(a.text("stdout")).isEqualTo("/workspace/a/b\nsh\n");
  }

  @Test
  void exec_createsTheSessionFirstWhenItDoesNotExist() {
    assertThat(box.get("/v1/sessions/implicit").status()).isEqualTo(404);

    assertThat(box.exec("implicit", "true").status()).isEqualTo(200);

    assertThat(box.get("/v1/sessions/implicit").status()).isEqualTo(200);
  }

  @Test
  void exec_passesEnvToTheCommand() {
    Answer a = box.exec("env", "echo \"$GREETING\"", "\"env\":{\"GREETING\":\"hello there\"}");

    assertThat(a.text("stdout")).isEqualTo("hello there\n");
  }

  @Test
  void envIsNeverVisibleOnHostCommandLinesWhileTheCommandRuns() throws Exception {
    String secret = "box-secret-" + UUID.randomUUID();
    CompletableFuture<Answer> running =
        box.execUntilReleased(
            "env2", "/tmp/done", "\"env\":{\"SECRET\":\"" + secret + "\"},\"timeout_sec\":20");
    String seen = HostProcesses.commandLinesContaining(secret);
    box.exec("env2", "touch /tmp/done");

    assertThat(running.get().text("status")).isEqualTo("completed");
    assertThat(seen).isEmpty();
  }

  @Test
  void filesInTheWorkspaceAndTmpPersistBetweenExecs() {
    box.exec("persist", "echo one > /workspace/f; echo two > /tmp/g");

    assertThat(box.exec("persist", "cat /workspace/f /tmp/g").text("stdout"))
        .isEqualTo("one\ntwo\n");
  }

  @Test
  void invalidUtf8BecomesTheReplacementCharacter() {
    Answer a = box.exec("utf8", "printf '\\377ok \\342\\202\\254'");

    assertThat(a.text("stdout")).isEqualTo("\uFFFDok \u20AC");
  }

  @Test
  void outputFlood_keepsHeadAndTailWithOneMarkerAndCountsWhatWasDropped() {
    Answer a = box.exec("flood", "yes | head -c 50000000; echo END", "\"timeout_sec\":120");

    String out = a.text("stdout");
    assertThat(a.text("status")).isEqualTo("completed");
    assertThat(a.body().path("stdout_truncated_bytes").asLong()).isEqualTo(50_000_004L - 65_536);
    assertThat(out).startsWith("y\ny\n").endsWith("y\nEND\n");
    assertThat(out.length()).isLessThan(65_536 + 200);
    assertThat(out.split("bytes of output dropped here", -1)).hasSize(2);
  }

  @Test
  void execsInOneSessionRunConcurrently() throws Exception {
    box.exec("concurrent", "true");
    CompletableFuture<Answer> waiter =
        box.execAsync(
            "concurrent",
            "while [ ! -f /tmp/go ]; do sleep 0.05; done; echo released",
            "\"timeout_sec\":30");
    box.exec("concurrent", "sleep 0.3; touch /tmp/go");

    assertThat(waiter.get().text("stdout")).isEqualTo("released\n");
  }

  @Test
  void timeout_killsTheWholeTreeItStarted_andTheSessionSurvives() {
    box.exec("timeout", "echo kept > /workspace/kept");
    Answer a =
        box.exec(
            "timeout",
            "(setsid sh -c 'sleep 300' &); (sh -c 'sleep 301 &' &); nohup sleep 302 >/dev/null &"
                + " echo before; sleep 303",
            "\"timeout_sec\":2");

    assertThat(a.text("status")).isEqualTo("timed_out");
    assertThat(a.body().path("exit_code").isNull()).isTrue();
    assertThat(a.text("stdout")).isEqualTo("before\n");
    assertThat(a.text("stderr")).isEqualTo("Command timed out after 2 seconds.");
    // Bounded far below the command's own 300 s: the kill happened.
    assertThat(a.body().path("duration_ms").asLong()).isLessThan(30_000);
    Answer after = box.exec("timeout", "ps -eo args; cat /workspace/kept");
    assertThat(after.text("stdout")).doesNotContain("sleep 30").endsWith("kept\n");
  }

  @Test
  void timeout_killsAProcessThatIgnoresSigterm() {
    Answer a = box.exec("stubborn", "trap '' TERM; sleep 300", "\"timeout_sec\":1");

    assertThat(a.text("status")).isEqualTo("timed_out");
    assertThat(box.exec("stubborn", "ps -eo args").text("stdout")).doesNotContain("sleep 300");
  }

  @Test
  void backgroundProcess_survivesANormalExec_andDiesWithTheSession() throws IOException {
    String marker = "tick-" + UUID.randomUUID();
    Answer started =
        box.exec(
            "background",
            // "started" first: the loop's first tick would race an echo after it.
            "echo started; nohup sh -c 'while :; do echo " + marker + "; sleep 0.1; done' &");
    assertThat(started.text("stdout")).startsWith("started\n");

    // It keeps writing to the exec's stdout after the exec returned, and keeps running.
    Answer later = box.exec("background", "sleep 0.5; ps -eo args");
    assertThat(later.text("stdout")).contains(marker);
    assertThat(HostProcesses.commandLinesContaining(marker)).isNotEmpty();

    assertThat(box.delete("/v1/sessions/background").status()).isEqualTo(200);
    assertThat(HostProcesses.commandLinesContaining(marker)).isEmpty();
  }

  @Test
  void emptyCmd_isAValidationError() {
    Answer a = box.exec("empty", "   ");

    assertError(a, 400, "validation_error").isEqualTo("cmd must not be empty");
  }

  @Test
  void workdirThatCannotBeCreated_failsTheCommandWithAMessage() {
    Answer a = box.exec("badwd", "true", "\"workdir\":\"/usr/nope\"");

    assertThat(a.body().path("exit_code").asInt()).isEqualTo(126);
    assertThat(a.text("stderr")).contains("cannot enter workdir /usr/nope");
  }
}
