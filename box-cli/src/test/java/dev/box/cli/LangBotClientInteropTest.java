package dev.box.cli;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.box.testclient.OptionalPiece;
import java.io.IOException;
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
import org.junit.jupiter.api.BeforeEach;
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

  /** The launcher {@code scripts/python-client} writes: the tree's Python with the SDK. */
  private static final Path PYTHON = CACHE.resolve("python3");

  @TempDir Path dir;

  @BeforeEach
  void langBotsPythonClientIsSetUp() {
    OptionalPiece.LANGBOT_CLIENT.assumePresent(
        Files.isExecutable(PYTHON),
        "LangBot's Python client is not set up ("
            + PYTHON
            + " is missing): run scripts/python-client, as scripts/test does");
  }

  @Test
  void websocket_withLangBotsControlToken_everyAction() throws Exception {
    String token = "interop-" + UUID.randomUUID() + UUID.randomUUID();
    Map<String, String> env = Map.of("LANGBOT_BOX_CONTROL_TOKEN", token);
    runOverWebSocket(
        groups("core", "workspace", "processes", "errors", "auth", "skills", "shutdown"), env);
  }

  @Test
  void websocket_withoutAToken_onAnInsecureServer_andAdmission() throws Exception {
    // Admission is last: once a runtime enforces it, it cannot be switched off.
    runOverWebSocket(groups("core", "processes", "admission"), Map.of(), "--insecure");
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

  /**
   * Runs the driver's {@code groups} against a {@code box serve} process of the bwrap backend with
   * {@code env} and {@code flags}, its state in a data dir of its own, not under LangBot's {@code
   * host_root}.
   */
  private void runOverWebSocket(List<String> groups, Map<String, String> env, String... flags)
      throws Exception {
    Path state = Files.createDirectories(dir.resolve("box-state"));
    ServeProcessTest.Server box = ServeProcessTest.Server.serve(state, env, flags);
    try {
      runDriver(
          groups,
          env,
          "--transport",
          "ws",
          "--url",
          "ws://127.0.0.1:" + box.port(),
          "--relay-base",
          "http://127.0.0.1:" + box.port(),
          "--host-root",
          langbotDir().resolve("data/box").toString());
    } finally {
      box.process().destroy();
      box.process().waitFor();
    }
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
    List<String> command = new ArrayList<>(List.of(PYTHON.toString(), driverScript().toString()));
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
    return List.of(java, "-cp", System.getProperty("java.class.path"), "dev.box.cli.Main");
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
}
