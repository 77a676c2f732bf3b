package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxJson;
import dev.box.server.BoxServer;
import dev.box.server.ServerConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The {@code box} command run in-process against a real Box server on loopback, which runs real
 * bubblewrap sandboxes: what each command prints and which exit code it returns.
 */
class BoxCliTest {
  @TempDir static Path dataDir;

  private static BoxServer server;
  private static String url;
  private static String dataDirArg;

  @BeforeAll
  static void startServer() {
    server = bwrapServer(dataDir);
    url = "http://127.0.0.1:" + server.port();
    dataDirArg = dataDir.toString();
  }

  /** A server on bubblewrap, on a free loopback port, with {@code dataDir}. */
  static BoxServer bwrapServer(Path dataDir) {
    return BoxServer.start(
        ServerConfig.resolve(
            Map.of("port", "0", "data_dir", dataDir.toString(), "backend", "bwrap"), Map.of()));
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @Test
  void exec_printsTheCommandsOutput_andExitsZero() {
    Run run = exec("--", "echo", "hi");

    assertThat(run).isEqualTo(new Run(0, "hi\n", ""));
  }

  @Test
  void exec_printsOutputAsTheCommandWritesIt() throws Exception {
    StringWriter out = new StringWriter();
    CommandLine cli = BoxCli.newCommandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(new StringWriter(), true));
    String waits = "echo first; while [ ! -f /tmp/go ]; do sleep 0.05; done; echo second";
    CompletableFuture<Integer> running =
        CompletableFuture.supplyAsync(
            () ->
                cli.execute(
                    "exec",
                    "--url",
                    url,
                    "--data-dir",
                    dataDirArg,
                    "--session",
                    "live",
                    "--",
                    waits));

    await().atMost(Duration.ofSeconds(30)).until(() -> out.toString().equals("first\n"));
    assertThat(running).as("the command waits for /tmp/go").isNotDone();
    assertThat(exec("--session", "live", "--", "touch /tmp/go").exitCode()).isZero();

    assertThat(running.get(30, TimeUnit.SECONDS)).isZero();
    assertThat(out.toString()).isEqualTo("first\nsecond\n");
  }

  @Test
  void exec_passesStderrThroughToStderr() {
    Run run = exec("--", "echo out; echo err >&2");

    assertThat(run).isEqualTo(new Run(0, "out\n", "err\n"));
  }

  @Test
  void exec_exitsWithTheCommandsExitCode() {
    assertThat(exec("--", "sh", "-c", "exit 7").exitCode()).isEqualTo(7);
  }

  @Test
  void exec_thatTimesOut_exits124() {
    Run run = exec("--session", "slow", "--timeout", "1", "--", "sleep", "5");

    assertThat(run.exitCode()).isEqualTo(124);
    assertThat(run.err()).contains("timed out");
  }

  @Test
  void exec_quotesEachOfSeveralWords_soTheShellSeesThemAsArguments() {
    Run run = exec("--", "printf", "%s|", "a b", "it's", "$HOME", "*");

    assertThat(run).isEqualTo(new Run(0, "a b|it's|$HOME|*|", ""));
  }

  @Test
  void exec_runsOneWordAsAShellCommand() {
    assertThat(exec("--", "echo hi | wc -c").out().strip()).isEqualTo("3");
  }

  @Test
  void exec_withoutDoubleDash_leavesOptionsAfterTheCommandToTheCommand() {
    assertThat(exec("ls", "-d", "/workspace")).isEqualTo(new Run(0, "/workspace\n", ""));
  }

  @Test
  void exec_passesEnvironmentVariables() {
    Run run = exec("-e", "GREETING=hello", "-e", "EQ=a=b", "--", "echo $GREETING $EQ");

    assertThat(run).isEqualTo(new Run(0, "hello a=b\n", ""));
  }

  @Test
  void exec_withAnEnvironmentEntryWithoutEquals_isAUsageError() {
    Run run = exec("-e", "NOEQUALS", "--", "true");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("NOEQUALS");
  }

  @Test
  void sessions_listsASessionAsATableOrJson() throws IOException {
    exec("--session", "listed", "--", "true");

    Run table = atServer("sessions");
    Run json = atServer("sessions", "--json");

    assertThat(table.exitCode()).isZero();
    assertThat(table.out().lines().findFirst())
        .hasValueSatisfying(
            header ->
                assertThat(header.split(" {2,}"))
                    .containsExactly(
                        "SESSION",
                        "BACKEND",
                        "STATE",
                        "NETWORK",
                        "PERSISTENT",
                        "CREATED",
                        "LAST USED"));
    assertThat(table.out().lines().filter(l -> l.startsWith("listed ")))
        .singleElement()
        .satisfies(
            line ->
                assertThat(line.split(" +")).startsWith("listed", "bwrap", "running", "off", "no"));
    List<String> ids = new ArrayList<>();
    BoxJson.newMapper().readTree(json.out()).forEach(s -> ids.add(s.path("session_id").asText()));
    assertThat(ids).contains("listed");
  }

  @Test
  void pauseAndResume_printTheSessionsState_andExecResumesAPausedSession() {
    exec("--session", "napping", "--", "true");

    assertThat(atServer("pause", "--session", "napping"))
        .isEqualTo(new Run(0, "napping paused\n", ""));
    assertThat(atServer("pause", "--session", "napping").out()).isEqualTo("napping paused\n");
    assertThat(atServer("sessions").out().lines().filter(l -> l.startsWith("napping ")))
        .singleElement()
        .satisfies(line -> assertThat(line.split(" +")).contains("paused"));
    assertThat(atServer("resume", "--session", "napping"))
        .isEqualTo(new Run(0, "napping running\n", ""));
    atServer("pause", "--session", "napping");
    assertThat(exec("--session", "napping", "--", "echo", "awake").out()).isEqualTo("awake\n");
    assertThat(atServer("sessions").out().lines().filter(l -> l.startsWith("napping ")))
        .singleElement()
        .satisfies(line -> assertThat(line.split(" +")).contains("running"));
  }

  @Test
  void pause_ofAMissingSession_reportsSessionNotFound_andExits1() {
    Run run = atServer("pause", "--session", "missing");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).startsWith("box: session_not_found: ");
  }

  @Test
  void fork_startsACopy_andSnapshotCreateLsRm_keepAndDropOne() {
    exec("--session", "forked", "--", "sh", "-c", "echo original > /workspace/f");

    assertThat(atServer("fork", "--session", "forked", "--to", "fork-copy"))
        .isEqualTo(new Run(0, "fork-copy running\n", ""));
    assertThat(exec("--session", "fork-copy", "--", "cat", "/workspace/f").out())
        .isEqualTo("original\n");
    assertThat(snapshot("create", "--session", "forked", "--name", "cli-snap"))
        .isEqualTo(new Run(0, "snapshot cli-snap of forked\n", ""));
    assertThat(snapshot("ls").out().lines().filter(l -> l.startsWith("cli-snap ")))
        .singleElement()
        .satisfies(line -> assertThat(line.split(" +")).startsWith("cli-snap", "forked"));
    assertThat(snapshot("rm", "cli-snap")).isEqualTo(new Run(0, "deleted snapshot cli-snap\n", ""));
    assertThat(snapshot("ls").out()).doesNotContain("cli-snap");
    Run again = snapshot("rm", "cli-snap");
    assertThat(again.exitCode()).isEqualTo(1);
    assertThat(again.err()).startsWith("box: not_found: snapshot cli-snap not found");
    Run onto = atServer("fork", "--session", "forked", "--to", "forked");
    assertThat(onto.exitCode()).isEqualTo(1);
    assertThat(onto.err()).startsWith("box: validation_error: ");
  }

  @Test
  void sessionRm_deletesTheSession() {
    exec("--session", "doomed", "--", "true");

    Run run = box("session", "rm", "--url", url, "--data-dir", dataDirArg, "doomed");

    assertThat(run).isEqualTo(new Run(0, "deleted doomed\n", ""));
    assertThat(atServer("sessions").out()).doesNotContain("doomed");
  }

  @Test
  void sessionRm_ofAMissingSession_reportsSessionNotFound_andExits1() {
    Run run = box("session", "rm", "--url", url, "--data-dir", dataDirArg, "missing");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("box: session_not_found: ");
  }

  @Test
  void status_showsTheBackendAndLimits() throws IOException {
    Run human = atServer("status");
    JsonNode json = BoxJson.newMapper().readTree(atServer("status", "--json").out());

    assertThat(human.exitCode()).isZero();
    assertThat(human.out())
        .contains("backend:         bwrap (available)")
        .contains("max_sessions=64")
        .contains("session ttl:     300 s idle");
    assertThat(json.path("backend").path("name").asText()).isEqualTo("bwrap");
  }

  @Test
  void clientCommand_withNoServerListening_exits3WithAHint() throws IOException {
    Run run = box("status", "--url", "http://127.0.0.1:" + closedPort());

    assertThat(run.exitCode()).isEqualTo(3);
    assertThat(run.err())
        .startsWith("box: runtime_unavailable: box runtime unavailable: ")
        .contains("is the server running");
  }

  @Test
  void clientCommand_withTheTokenInTheDataDir_orGiven_isAuthorized() {
    String token = Objects.requireNonNull(server.controlToken());

    assertThat(atServer("status").exitCode()).isZero();
    assertThat(box("status", "--url", url, "--token", token).exitCode()).isZero();
  }

  @Test
  void clientCommand_withoutAToken_exits1_andSaysWhereTheTokenIsExpected(@TempDir Path empty) {
    Path file = empty.resolve(".box-state/control-token");

    Run run = box("sessions", "--url", url, "--data-dir", empty.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .startsWith("box: unauthorized: missing control token")
        .contains("else the one in " + file + " (which does not exist)")
        .contains("--data-dir or BOX_DATA_DIR");
  }

  @Test
  void clientCommand_withATokenFileItCannotRead_exits2_andSaysWhy(@TempDir Path broken)
      throws IOException {
    Path file = java.nio.file.Files.createDirectories(broken.resolve(".box-state/control-token"));

    Run run = box("status", "--url", url, "--data-dir", broken.toString());

    assertThat(run)
        .isEqualTo(
            new Run(
                2,
                "",
                "box: cannot read the control token: control token file "
                    + file
                    + " is a directory\n"));
  }

  @Test
  void clientCommand_withAWrongToken_saysWhichTokenWasRefused() {
    Run run = box("exec", "--url", url, "--token", "not-the-token", "--", "true");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "box: unauthorized: invalid control token\n"
                + "box: the token of --token or BOX_CONTROL_TOKEN was refused.\n");
  }

  @Test
  void serve_withAnInvalidPort_printsTheReason_andExits2(@TempDir Path otherDataDir) {
    Run run = box("serve", "--port", "70000", "--data-dir", otherDataDir.toString());

    assertThat(run).isEqualTo(new Run(2, "", "box: port must be between 0 and 65535\n"));
  }

  @Test
  void serve_onAPortInUse_printsTheReason_andExits2(@TempDir Path otherDataDir) {
    String port = String.valueOf(server.port());

    Run run = box("serve", "--port", port, "--data-dir", otherDataDir.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).startsWith("box: cannot listen on 127.0.0.1:" + port + ": ");
  }

  @Test
  void version_printsTheServerVersion() {
    assertThat(box("--version")).isEqualTo(new Run(0, "box " + BoxServer.VERSION + "\n", ""));
  }

  @Test
  void cp_uploadsAndDownloadsAFile_andATreeAsATar(@TempDir Path local) throws IOException {
    exec(
        "--session",
        "cp",
        "--",
        "mkdir -p /workspace/tree/sub && echo deep > /workspace/tree/sub/f");
    byte[] data = new byte[70_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i % 251);
    }
    Path source = Files.write(local.resolve("source.bin"), data);

    Run up = atServer("cp", source.toString(), "cp:in/copy.bin");
    Run down = atServer("cp", "cp:/workspace/in/copy.bin", local.resolve("back.bin").toString());
    Run intoDir = atServer("cp", "cp:in/copy.bin", local.toString());
    Run tarDown = atServer("cp", "--tar", "cp:tree", local.resolve("tree.tar").toString());
    Run tarUp = atServer("cp", "--tar", local.resolve("tree.tar").toString(), "cp:/workspace/t2");

    assertThat(List.of(up, down, intoDir, tarDown, tarUp)).allMatch(r -> r.exitCode() == 0);
    assertThat(Files.readAllBytes(local.resolve("back.bin"))).isEqualTo(data);
    assertThat(Files.readAllBytes(local.resolve("copy.bin"))).isEqualTo(data);
    assertThat(exec("--session", "cp", "--", "cat /workspace/t2/sub/f").out()).isEqualTo("deep\n");
  }

  @Test
  void cp_reportsAMissingFile_andRefusesTwoLocalPaths(@TempDir Path local) {
    exec("--session", "cp-missing", "--", "true");

    Run missing = atServer("cp", "cp-missing:/workspace/nope", local.resolve("x").toString());
    Run twoLocal = atServer("cp", "/a", "./b");

    assertThat(missing.exitCode()).isEqualTo(1);
    assertThat(missing.err()).startsWith("box: file_not_found: ");
    assertThat(local.resolve("x")).doesNotExist();
    assertThat(twoLocal.exitCode()).isEqualTo(2);
    assertThat(twoLocal.err()).contains("exactly one of SOURCE and TARGET");
  }

  private record Run(int exitCode, String out, String err) {}

  /** {@code box exec} against the suite's server, its token found in the server's data dir. */
  private static Run exec(String... args) {
    return atServer("exec", args);
  }

  /** {@code box command} against the suite's server, its token found in the server's data dir. */
  private static Run atServer(String command, String... args) {
    List<String> line = new ArrayList<>(List.of(command, "--url", url, "--data-dir", dataDirArg));
    line.addAll(List.of(args));
    return box(line.toArray(String[]::new));
  }

  /** {@code box snapshot sub} against the suite's server. */
  private static Run snapshot(String sub, String... args) {
    List<String> line =
        new ArrayList<>(List.of("snapshot", sub, "--url", url, "--data-dir", dataDirArg));
    line.addAll(List.of(args));
    return box(line.toArray(String[]::new));
  }

  private static Run box(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = BoxCli.newCommandLine();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exitCode = cli.execute(args);
    return new Run(exitCode, out.toString(), err.toString());
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
