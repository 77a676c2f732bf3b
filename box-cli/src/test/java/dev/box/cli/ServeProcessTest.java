package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxDataDir;
import dev.box.api.BoxSpec;
import dev.box.client.BoxClient;
import dev.box.sandbox.WorkspaceSlots;
import dev.box.testclient.PrivateWorkspaces;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code box serve} as its own process, stopped the way an operator or a crash stops it: nothing it
 * started may outlive it, and what a crash leaves behind is removed by the next start.
 */
class ServeProcessTest {
  private static final Pattern LISTENING =
      Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+), API protected by ([^;]*);");

  @TempDir Path dataDir;

  @Test
  void sigterm_stopsEverySandboxAndRemovesItsCgroups() throws Exception {
    String marker = "box-sigterm-" + UUID.randomUUID();
    Server server = serverRunningSleepers(marker, "one", "two");
    assertThat(hostProcessesContaining(dataDir.toString())).isNotEmpty();

    server.process.destroy(); // SIGTERM

    assertThat(server.process.waitFor()).isIn(0, 143);
    assertThat(hostProcessesContaining(marker)).isEmpty();
    assertThat(hostProcessesContaining(dataDir.toString())).isEmpty();
    assertThat(cgroupBase(dataDir)).doesNotExist();
    assertThat(PrivateWorkspaces.names(dataDir)).isEmpty();
  }

  @Test
  void afterAServerIsKilled_itsSandboxesDie_andTheNextServerRemovesWhatWasLeft() throws Exception {
    String marker = "box-sigkill-" + UUID.randomUUID();
    Server first = serverRunningSleepers(marker, "crash");

    first.process.destroyForcibly(); // SIGKILL: no shutdown hook runs
    first.process.waitFor();

    // --die-with-parent ends the sandboxes with the server ...
    await().atMost(Duration.ofSeconds(10)).until(() -> hostProcessesContaining(marker).isEmpty());
    // ... but its workspace and cgroups stay until the next server of this data dir starts.
    assertThat(PrivateWorkspaces.names(dataDir)).hasSize(1);
    Set<String> killed = instancesOf(names(cgroupBase(dataDir)));
    assertThat(killed).as("the cgroups of the killed server's sandboxes").hasSize(1);

    Server second = Server.start(dataDir);
    try {
      assertThat(PrivateWorkspaces.names(dataDir)).isEmpty();
      assertThat(instancesOf(names(cgroupBase(dataDir))))
          .as("only the new server's sandboxes (its pre-started ones) have cgroups")
          .doesNotContainAnyElementsOf(killed);
    } finally {
      second.process.destroy();
      second.process.waitFor();
    }
  }

  @Test
  void sigtermWhileTheServerStarts_letsTheStartEnd_thenStopsWhatItStarted() throws Exception {
    Process process =
        serveCommand(dataDir, Map.of()).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    BufferedReader log =
        new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    String line;
    while ((line = log.readLine()) != null) {
      seen.append(line).append('\n');
      if (line.contains("bwrap backend: available")) {
        // Found early in the start, before the pool starts its sandboxes and the port opens.
        process.toHandle().destroy(); // SIGTERM, and the log stays open to be read
        break;
      }
    }
    seen.append(drain(log));

    assertThat(process.waitFor()).isIn(0, 143);
    assertThat(seen.toString()).contains("bwrap backend: available").contains("Box stopped");
    assertThat(WorkspaceSlots.mountPointsUnder(dataDir.toRealPath())).isEmpty();
    assertThat(cgroupBase(dataDir)).doesNotExist();
    assertThat(PrivateWorkspaces.names(dataDir)).isEmpty();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> hostProcessesContaining(dataDir.toString()).isEmpty());
  }

  @Test
  void ctrlCToTheServersProcessGroup_stopsItsSessionsThroughItsMounter() throws Exception {
    ProcessBuilder builder = serveCommand(dataDir, Map.of());
    // The leader of a group of its own, SIGINT handled as in a terminal's foreground job.
    builder.command().addAll(0, List.of("setsid", "env", "--default-signal=INT"));
    Server server = Server.start(builder);
    try (BoxClient client = server.client(dataDir)) {
      // A workspace bound into a pre-started sandbox by the server's box-mounter.
      assertThat(client.exec(BoxSpec.builder("bound").cmd("echo hi > f; cat f").build()).stdout())
          .isEqualTo("hi\n");
    }

    new ProcessBuilder("kill", "-INT", "--", "-" + server.process.pid())
        .inheritIO()
        .start()
        .waitFor();

    assertThat(server.process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(server.restOfLog.get(10, TimeUnit.SECONDS))
        .contains("stopped session bound")
        .contains("Box stopped")
        .doesNotContain("box-mounter failed");
    assertThat(WorkspaceSlots.mountPointsUnder(dataDir.toRealPath())).isEmpty();
    assertThat(PrivateWorkspaces.names(dataDir)).isEmpty();
  }

  @Test
  void boxServeWithNoOptions_andBoxExecInTheSameDirectory_needNoToken(@TempDir Path workDir)
      throws Exception {
    Server server = Server.start(workDir, Map.of(), "serve", "--backend", "bwrap", "--port", "0");
    try {
      Path file = workDir.resolve("data/box/.box-state/control-token");
      String token = Files.readString(file).strip();
      String exec = "http://127.0.0.1:" + server.port;

      Run here = Run.box(workDir, Map.of(), "exec", "--url", exec, "--", "echo", "hi");
      Run elsewhere = Run.box(dataDir, Map.of(), "exec", "--url", exec, "--", "echo", "hi");

      assertThat(server.protection).isEqualTo("the generated control token in " + file);
      assertThat(server.startupLog).doesNotContain(token);
      assertThat(here).isEqualTo(new Run(0, "hi\n", ""));
      assertThat(elsewhere.exitCode()).isEqualTo(1);
      assertThat(elsewhere.err())
          .startsWith("box: unauthorized: missing control token")
          .contains(dataDir.resolve("data/box/.box-state/control-token").toString())
          .doesNotContain(token);
    } finally {
      server.process.destroy();
      server.process.waitFor();
    }
  }

  @Test
  void theServersTokens_neverReachASandbox() throws Exception {
    String boxToken = "box-token-" + UUID.randomUUID();
    String langbotToken = "langbot-token-" + UUID.randomUUID();
    Server server =
        Server.serve(
            dataDir,
            Map.of("BOX_CONTROL_TOKEN", boxToken, "LANGBOT_BOX_CONTROL_TOKEN", langbotToken));
    try (BoxClient client = BoxClient.builder(server.uri()).controlToken(boxToken).build()) {
      String seen =
          client
              .exec(
                  BoxSpec.builder("env")
                      .cmd("env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'")
                      .build())
              .stdout();

      assertThat(server.protection)
          .isEqualTo("the configured control token and LangBot's (LANGBOT_BOX_CONTROL_TOKEN)");
      assertThat(seen).contains("PATH=").doesNotContain(boxToken).doesNotContain(langbotToken);
      assertThat(dataDir.resolve(".box-state/control-token")).doesNotExist();
    } finally {
      server.process.destroy();
      server.process.waitFor();
    }
  }

  @Test
  void insecure_saysTheApiIsOpen_andNeedsNoToken() throws Exception {
    Server server = Server.serve(dataDir, Map.of(), "--insecure");
    try (BoxClient anonymous = BoxClient.connect(server.uri())) {
      assertThat(server.protection).isEqualTo("NOTHING (--insecure, no control token)");
      assertThat(anonymous.sessions()).isEmpty();
      assertThat(dataDir.resolve(".box-state/control-token")).doesNotExist();
    } finally {
      server.process.destroy();
      server.process.waitFor();
    }
  }

  /**
   * The jar's entry point starts a server with plain arguments without picocli, whose classes the
   * AOT cache cannot hold: every start would load and verify them from the jar.
   */
  @Test
  void aServeWithPlainArguments_loadsNoClassOfPicocli(@TempDir Path logs) throws Exception {
    Path classes = logs.resolve("classes.log");
    Server server =
        Server.serve(
            dataDir,
            Map.of("JAVA_TOOL_OPTIONS", "-Xlog:class+load=info:file=" + classes),
            "--insecure");
    try (BoxClient anonymous = BoxClient.connect(server.uri())) {
      assertThat(anonymous.sessions()).isEmpty();
    } finally {
      server.process.destroy();
      server.process.waitFor();
    }

    String loaded = Files.readString(classes);
    assertThat(loaded).contains(" dev.box.cli.Serve ").doesNotContain(" picocli.");
  }

  /**
   * Starts a server on {@link #dataDir} and, through it, a background sleep marked {@code marker}
   * in each of {@code sessions}; returns once every sleep runs.
   */
  private Server serverRunningSleepers(String marker, String... sessions) throws IOException {
    Server server = Server.start(dataDir);
    try (BoxClient client = server.client(dataDir)) {
      for (String session : sessions) {
        client.exec(background(session, marker));
      }
    }
    // A shell that forked its sleep shows the marker in the child too, until the child execs.
    await()
        .untilAsserted(() -> assertThat(hostProcessesContaining(marker)).hasSize(sessions.length));
    return server;
  }

  private static BoxSpec background(String session, String marker) {
    return BoxSpec.builder(session)
        .cmd("nohup sh -c 'sleep 1000; echo " + marker + "' >/dev/null 2>&1 &")
        .build();
  }

  /**
   * A {@code box serve} child process on a free port, what its startup line says protects the API,
   * and its log up to that line. {@link LangBotClientInteropTest} starts its servers with it too.
   */
  record Server(
      Process process,
      int port,
      String protection,
      String startupLog,
      CompletableFuture<String> restOfLog) {
    static Server start(Path dataDir) throws IOException {
      return serve(dataDir, Map.of());
    }

    /** {@code box serve} of bwrap on {@code dataDir}, with {@code env} and {@code more} flags. */
    static Server serve(Path dataDir, Map<String, String> env, String... more) throws IOException {
      return start(serveCommand(dataDir, env, more));
    }

    /** Runs {@code box args} in {@code workDir} with {@code env} over a BOX_-free environment. */
    static Server start(Path workDir, Map<String, String> env, String... args) throws IOException {
      return start(command(workDir, env, args));
    }

    /** Starts {@code builder}'s {@code box serve} and waits for the line that says it listens. */
    static Server start(ProcessBuilder builder) throws IOException {
      Process process = builder.redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      BufferedReader log =
          new BufferedReader(
              new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      String line;
      while ((line = log.readLine()) != null) {
        seen.append(line).append('\n');
        Matcher m = LISTENING.matcher(line);
        if (m.find()) {
          CompletableFuture<String> rest = new CompletableFuture<>();
          Thread.ofPlatform().daemon().start(() -> rest.complete(drain(log)));
          return new Server(
              process, Integer.parseInt(m.group(1)), m.group(2), seen.toString(), rest);
        }
      }
      throw new IllegalStateException("box serve exited before listening: " + seen);
    }

    URI uri() {
      return URI.create("http://127.0.0.1:" + port);
    }

    /** A client with the token the server generated in {@code dataDir}. */
    BoxClient client(Path dataDir) {
      return BoxClient.builder(uri()).controlTokenFrom(dataDir).build();
    }
  }

  /** A {@code box} command that ran in a JVM of its own: its exit code, stdout and stderr. */
  private record Run(int exitCode, String out, String err) {
    static Run box(Path workDir, Map<String, String> env, String... args) throws Exception {
      Process process = command(workDir, env, args).start();
      process.getOutputStream().close();
      var err =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> readAll(process.getErrorStream()));
      String out = readAll(process.getInputStream());
      return new Run(process.waitFor(), out, err.get());
    }

    private static String readAll(java.io.InputStream in) {
      try {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  /** {@code box serve} of bwrap on {@code dataDir} and a free port, with {@code more} flags. */
  static ProcessBuilder serveCommand(Path dataDir, Map<String, String> env, String... more) {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "serve", "--backend", "bwrap", "--port", "0", "--data-dir", dataDir.toString()));
    args.addAll(List.of(more));
    return command(dataDir, env, args.toArray(String[]::new));
  }

  /**
   * {@code box args} in a JVM of its own, in {@code workDir}, without the caller's BOX_ variables.
   */
  static ProcessBuilder command(Path workDir, Map<String, String> env, String... args) {
    String java = ProcessHandle.current().info().command().orElseThrow();
    List<String> command = new java.util.ArrayList<>();
    command.addAll(List.of(java, "-cp", System.getProperty("java.class.path"), "dev.box.cli.Main"));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile());
    builder.environment().keySet().removeIf(k -> k.startsWith("BOX_") || k.startsWith("LANGBOT_"));
    builder.environment().putAll(env);
    return builder;
  }

  /** The server's stderr from here to its end, read as it comes so that it keeps flowing. */
  private static String drain(BufferedReader log) {
    StringBuilder rest = new StringBuilder();
    try {
      String line;
      while ((line = log.readLine()) != null) {
        rest.append(line).append('\n');
      }
    } catch (IOException e) {
      // The server is gone.
    }
    return rest.toString();
  }

  /** The pids of host processes whose command line contains {@code text}. */
  static List<String> hostProcessesContaining(String text) throws IOException {
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      List<String> found = new java.util.ArrayList<>();
      for (Path proc : procs) {
        try {
          String cmdline =
              new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8);
          if (cmdline.contains(text)) {
            found.add(proc.getFileName().toString());
          }
        } catch (IOException e) {
          // Ended while we looked.
        }
      }
      return found;
    }
  }

  /** The cgroups of a server of {@code dataDir}: named after the hash of its state dir. */
  static Path cgroupBase(Path dataDir) throws Exception {
    byte[] digest =
        MessageDigest.getInstance("SHA-256")
            .digest(BoxDataDir.stateDir(dataDir).toString().getBytes(StandardCharsets.UTF_8));
    return Path.of("/sys/fs/cgroup/pids", "box-" + HexFormat.of().formatHex(digest, 0, 4));
  }

  /**
   * The server instances that sandbox names ({@code <instance>_<session>-<hash>}, or {@code
   * <instance>_pool-<n>} for a pre-started sandbox) belong to.
   */
  static Set<String> instancesOf(List<String> sandboxNames) {
    return sandboxNames.stream()
        .map(n -> n.substring(0, Math.max(0, n.indexOf('_'))))
        .collect(Collectors.toSet());
  }

  /** What the names of pre-started sandboxes contain. */
  static final String POOL_NAME = "_pool-";

  static List<String> names(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.filter(Files::isDirectory).map(p -> p.getFileName().toString()).toList();
    }
  }
}
