package dev.box.cli;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LangBot's own Python client, {@code ActionRPCBoxClient} of langbot-plugin-sdk, unchanged, drives
 * Box the three ways LangBot reaches its runtime: over WebSocket to a {@code box serve} process
 * with LangBot's control token, over WebSocket to one that requires no token, and over stdio to a
 * {@code box serve -s --ws-control-port P} that the client launches itself, as LangBot launches its
 * runtime (its environment, its {@code LANGBOT_BOX_*} variables, its default {@code box} config,
 * its working directory).
 *
 * <p>The checks are in {@code langbot/interop_driver.py}; it reports each one, and this test fails
 * with that report. The Python side (a Debian 13 tree with the SDK's dependencies, and the SDK's
 * source) is set up outside the repository by {@code scripts/python-client}, which {@code
 * scripts/test} runs; without it the test is skipped. {@code -Dbox.interop.groups=core,errors,...}
 * (or {@code BOX_INTEROP_GROUPS}) runs only the groups named.
 */
class LangBotClientInteropTest {
  private static final Path CACHE =
      Path.of(System.getProperty("box.python.cache", "/var/tmp/box-test-cache/langbot-python"));
  private static final Pattern LISTENING =
      Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");

  @TempDir Path dir;

  @Test
  void websocket_withLangBotsControlToken_everyAction() throws Exception {
    String token = "interop-" + UUID.randomUUID() + UUID.randomUUID();
    List<String> groups =
        groups("core", "workspace", "processes", "errors", "auth", "skills", "shutdown");
    try (BoxServe box = BoxServe.start(dir, Map.of("LANGBOT_BOX_CONTROL_TOKEN", token))) {
      runDriver(
          groups,
          Map.of("LANGBOT_BOX_CONTROL_TOKEN", token),
          "--transport",
          "ws",
          "--url",
          "ws://127.0.0.1:" + box.port,
          "--relay-base",
          "http://127.0.0.1:" + box.port,
          "--host-root",
          langbotDir().resolve("data/box").toString());
    }
  }

  @Test
  void websocket_withoutAToken_onAnInsecureServer_andAdmission() throws Exception {
    // Admission is last: once a runtime enforces it, it cannot be switched off.
    List<String> groups = groups("core", "processes", "admission");
    try (BoxServe box = BoxServe.start(dir, Map.of(), "--insecure")) {
      runDriver(
          groups,
          Map.of(),
          "--transport",
          "ws",
          "--url",
          "ws://127.0.0.1:" + box.port,
          "--relay-base",
          "http://127.0.0.1:" + box.port,
          "--host-root",
          langbotDir().resolve("data/box").toString());
    }
  }

  @Test
  void stdio_launchedTheWayLangBotLaunchesItsRuntime() throws Exception {
    List<String> groups = groups("core", "processes", "stdio_defaults", "shutdown");
    int port = freePort();
    List<String> launcher = new ArrayList<>(javaCommand());
    launcher.add("serve");
    // The operator's choice of backend reaches the runtime through LangBot's environment.
    runDriver(
        groups,
        Map.of("BOX_BACKEND", "bwrap"),
        "--transport",
        "stdio",
        "--box-command",
        jsonArray(launcher),
        "--port",
        String.valueOf(port),
        "--relay-base",
        "http://127.0.0.1:" + port);
  }

  /** The groups of a run that {@code box.interop.groups} leaves; skips the run if none. */
  private static List<String> groups(String... mine) {
    String selected = System.getProperty("box.interop.groups", System.getenv("BOX_INTEROP_GROUPS"));
    if (selected == null || selected.isBlank()) {
      return List.of(mine);
    }
    List<String> wanted = Arrays.stream(selected.split(",")).map(String::strip).toList();
    List<String> groups = Arrays.stream(mine).filter(wanted::contains).toList();
    assumeTrue(!groups.isEmpty(), "box.interop.groups=" + selected + " selects none of this run");
    return groups;
  }

  /** LangBot's working directory: the driver runs there, and so does a runtime it launches. */
  private Path langbotDir() throws IOException {
    return Files.createDirectories(dir.resolve("langbot"));
  }

  private void runDriver(List<String> groups, Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    Path python = CACHE.resolve("python3");
    assumeTrue(
        Files.isExecutable(python),
        "LangBot's Python client is not set up ("
            + python
            + " is missing): run scripts/python-client, as scripts/test does");
    List<String> command = new ArrayList<>(List.of(python.toString(), driverScript().toString()));
    command.addAll(List.of(args));
    command.addAll(List.of("--groups", String.join(",", groups)));
    ProcessBuilder builder =
        new ProcessBuilder(command).directory(langbotDir().toFile()).redirectErrorStream(true);
    withoutBoxVariables(builder).putAll(env);
    Process driver = builder.start();
    driver.getOutputStream().close();
    String report = new String(driver.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!driver.waitFor(10, TimeUnit.MINUTES)) {
      driver.destroyForcibly();
      fail("the LangBot client driver did not finish:\n" + report);
    }
    System.out.println(report);
    if (driver.exitValue() != 0) {
      fail(
          "LangBot's client against Box, groups "
              + groups
              + ", exit "
              + driver.exitValue()
              + ":\n"
              + report);
    }
  }

  private static Path driverScript() {
    try {
      return Path.of(
          Objects.requireNonNull(
                  LangBotClientInteropTest.class.getResource("/langbot/interop_driver.py"),
                  "langbot/interop_driver.py is not on the test class path")
              .toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code box} in a JVM of its own: this JVM's java and class path. */
  private static List<String> javaCommand() {
    String java = ProcessHandle.current().info().command().orElseThrow();
    return List.of(java, "-cp", System.getProperty("java.class.path"), "dev.box.cli.BoxCli");
  }

  private static Map<String, String> withoutBoxVariables(ProcessBuilder builder) {
    Map<String, String> environment = builder.environment();
    environment.keySet().removeIf(k -> k.startsWith("BOX_") || k.startsWith("LANGBOT_"));
    return environment;
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static String jsonArray(List<String> items) {
    StringBuilder json = new StringBuilder("[");
    for (String item : items) {
      if (json.length() > 1) {
        json.append(',');
      }
      json.append('"').append(item.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }
    return json.append(']').toString();
  }

  /**
   * A {@code box serve} process of the bwrap backend on a free loopback port, its state in a data
   * dir of its own (not under LangBot's {@code host_root}), its stderr kept for a failure report.
   */
  private static final class BoxServe implements AutoCloseable {
    final Process process;
    final int port;

    private BoxServe(Process process, int port) {
      this.process = process;
      this.port = port;
    }

    static BoxServe start(Path dir, Map<String, String> env, String... more) throws IOException {
      List<String> command = new ArrayList<>(javaCommand());
      command.addAll(List.of("serve", "--backend", "bwrap", "--port", "0"));
      command.addAll(List.of("--data-dir", dir.resolve("box-state").toString()));
      command.addAll(List.of(more));
      Path workDir = Files.createDirectories(dir.resolve("box-cwd"));
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .directory(workDir.toFile())
              .redirectOutput(ProcessBuilder.Redirect.DISCARD);
      withoutBoxVariables(builder).putAll(env);
      Process process = builder.start();
      BufferedReader log =
          new BufferedReader(
              new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      String line;
      while ((line = log.readLine()) != null) {
        seen.append(line).append('\n');
        Matcher m = LISTENING.matcher(line);
        if (m.find()) {
          Thread.ofPlatform().daemon().start(() -> drain(log));
          return new BoxServe(process, Integer.parseInt(m.group(1)));
        }
      }
      throw new IllegalStateException("box serve exited before listening: " + seen);
    }

    @Override
    public void close() throws InterruptedException {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }

    private static void drain(BufferedReader log) {
      try {
        while (log.readLine() != null) {
          // Keep the server's stderr flowing.
        }
      } catch (IOException e) {
        // The server is gone.
      }
    }
  }
}
