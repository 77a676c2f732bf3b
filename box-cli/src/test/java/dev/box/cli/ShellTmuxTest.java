package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.server.BoxServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code box shell} as a person uses it: the real CLI in a real terminal (a tmux pane on a server
 * of its own), against a real Box server on bubblewrap, driven with send-keys and read with
 * capture-pane. Output is matched by what only the remote shell's evaluation prints.
 */
class ShellTmuxTest {
  private static final Duration GENEROUS = Duration.ofSeconds(60);

  @TempDir static Path dataDir;

  private static BoxServer server;
  private static final String SOCKET = "box-shell-test-" + UUID.randomUUID();

  @BeforeAll
  static void startServer() {
    server = BoxCliTest.bwrapServer(dataDir);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      tmux("kill-server");
    } catch (IOException e) {
      // No tmux here: the test was skipped.
    } finally {
      server.close();
    }
  }

  @Test
  void boxShell_givesTheSandboxTheLocalSize_followsAResize_andExitsWithTheShellsCode()
      throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/tmux")), "tmux is not installed");
    Path config =
        Files.writeString(
            dataDir.resolve("tmux.conf"), "set -g status off\nset -g remain-on-exit on\n");
    // The class path is longer than a tmux command may be: java reads it from an argument file.
    Path arguments =
        Files.write(
            dataDir.resolve("box-shell.args"),
            List.of(
                "-cp",
                quoted(System.getProperty("java.class.path")),
                "dev.box.cli.Main",
                "shell",
                "--session",
                "tmux",
                "--url",
                "http://127.0.0.1:" + server.port(),
                "--data-dir",
                quoted(dataDir.toString())));
    tmux(
        "-f",
        config.toString(),
        "new-session",
        "-d",
        "-s",
        "box",
        "-x",
        "100",
        "-y",
        "30",
        "--",
        // The pane's shell prints the CLI's exit status: what tmux records of a dead pane differs
        // between machines.
        "/bin/sh",
        "-c",
        "\"$0\" \"$1\"; echo \"EXIT=$?=\"",
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "@" + arguments);

    assertThat(typeUntil("echo \"S=$(stty size)=E\"", "S=(\\d+ \\d+)=E", "30 100"))
        .isEqualTo("30 100");
    tmux("resize-window", "-t", "box", "-x", "120", "-y", "40");
    assertThat(typeUntil("echo \"R=$(stty size)=E\"", "R=(\\d+ \\d+)=E", "40 120"))
        .isEqualTo("40 120");
    assertThat(typeUntil("echo \"T=$(tty)=E\"", "T=([^=]+)=E", "/dev/pts/"))
        .startsWith("/dev/pts/");

    tmux("send-keys", "-t", "box", "exit 3", "Enter");
    String[] pane = {""};
    await()
        .atMost(GENEROUS)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              pane[0] = tmux("capture-pane", "-p", "-t", "box");
              return pane[0].contains("EXIT=");
            });
    Matcher exit = Pattern.compile("EXIT=(\\d+)=").matcher(pane[0]);
    assertThat(exit.find()).as("the pane shows the exit status:\n%s", pane[0]).isTrue();
    assertThat(exit.group(1)).isEqualTo("3");
  }

  /**
   * Types {@code keys} and Enter until the pane shows a match of {@code regex} whose first group
   * contains {@code wanted} (a resize reaches the remote shell within a poll of the size); the last
   * such group.
   */
  private static String typeUntil(String keys, String regex, String wanted) throws Exception {
    String[] found = {""};
    String[] pane = {""};
    try {
      awaitShown(keys, regex, wanted, found, pane);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError("the pane never showed " + wanted + ":\n" + pane[0], e);
    }
    return found[0];
  }

  private static void awaitShown(
      String keys, String regex, String wanted, String[] found, String[] pane) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              pane[0] = tmux("capture-pane", "-p", "-t", "box");
              Matcher m = Pattern.compile(regex).matcher(pane[0]);
              while (m.find()) {
                found[0] = m.group(1);
              }
              if (found[0].contains(wanted)) {
                return true;
              }
              tmux("send-keys", "-t", "box", keys, "Enter");
              return false;
            });
  }

  /** {@code value} as one argument of a java argument file. */
  private static String quoted(String value) {
    return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /** Runs tmux on this test's own server; what it printed. */
  private static String tmux(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("tmux", "-L", SOCKET));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor();
    return out;
  }
}
