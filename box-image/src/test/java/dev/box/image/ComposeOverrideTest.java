package dev.box.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxDataDir;
import dev.box.testclient.BoxSocket;
import dev.box.testclient.OptionalPiece;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Box as an operator deploys it next to LangBot: {@code scripts/image} builds the image, {@code
 * docker compose} starts it from LangBot's compose file plus {@code
 * docker/docker-compose.box.yaml}, and the test plays LangBot on the control channel: {@code
 * box_init} with the configuration LangBot's compose file gives it, then a {@code box_exec} in
 * LangBot's default workspace under the shared {@code data/box}, whose file must appear on the
 * host. {@code compose down} must leave no container and no network behind.
 *
 * <p>LangBot's image cannot be pulled here, so LangBot's compose file is a stand-in with its {@code
 * langbot_box} service only (resource {@code langbot-compose.yaml}), and the test speaks LangBot's
 * protocol itself over a loopback port that a test-only file publishes. The sandbox image is the
 * local test image ({@code box.local.image}, as an operator with their own image sets it), since
 * LangBot's default sandbox image cannot be pulled either. Runs against the Docker Engine that
 * {@code scripts/engines up} starts, with Compose v2 ({@code scripts/common.sh}); skipped only when
 * Docker does not answer.
 */
class ComposeOverrideTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String IMAGE_TAG = "box:compose-test";
  private static final String INSTANCE = "langbot-compose-test";
  private static final String TOKEN = "compose-test-token-0123456789abcdefghijklmnopqrstuv";
  private static final Duration COMMAND_LIMIT = Duration.ofMinutes(10);

  private final Path repo =
      Objects.requireNonNull(Path.of("").toAbsolutePath().getParent(), "the module's parent");
  private final String project = "box-compose-" + UUID.randomUUID().toString().substring(0, 8);
  private final AtomicInteger seq = new AtomicInteger();
  private Path dir = Path.of("");
  private Path boxRoot = Path.of("");
  private boolean composed;

  @BeforeEach
  void requireDocker() throws Exception {
    String socket = System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock");
    Assumptions.assumeTrue(
        Files.exists(Path.of(socket))
            && Command.run(docker("info"), repo, Map.of(), COMMAND_LIMIT).exitCode() == 0,
        "Docker does not answer on " + socket + " (scripts/engines up starts it)");
    OptionalPiece.DOCKER_COMPOSE.assumePresent(
        Command.run(docker("compose", "version"), repo, Map.of(), COMMAND_LIMIT).exitCode() == 0,
        "Compose v2 (docker compose) does not run; scripts/common.sh box_ensure_compose installs"
            + " it");
    dir = Files.createTempDirectory("box-compose-");
    boxRoot = dir.resolve("data/box");
  }

  @AfterEach
  void composeDown() throws Exception {
    if (composed) {
      Command.run(compose("down", "--timeout", "30"), dir, env(), COMMAND_LIMIT);
    }
    if (!dir.toString().isEmpty()) {
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path file : files.sorted((a, b) -> b.compareTo(a)).toList()) {
          Files.deleteIfExists(file);
        }
      }
    }
  }

  @Test
  void langBotsComposeFileWithTheOverride_runsExecsInTheSharedBoxRoot_andLeavesNothingBehind()
      throws Exception {
    long buildStart = System.nanoTime();
    List<String> build = List.of(repo.resolve("scripts/image").toString(), IMAGE_TAG);
    Command.run(
            build,
            repo,
            Map.of("BOX_JAR", repo.resolve("box-cli/target/box.jar").toString()),
            COMMAND_LIMIT)
        .ok(build);
    report("image built in %d ms", buildStart);

    copyResource("langbot-compose.yaml", dir.resolve("docker-compose.yaml"));
    Files.copy(
        repo.resolve("docker/docker-compose.box.yaml"), dir.resolve("docker-compose.box.yaml"));
    copyResource("loopback-port.yaml", dir.resolve("loopback-port.yaml"));

    long upStart = System.nanoTime();
    composed = true;
    List<String> up = compose("up", "-d");
    Command.run(up, dir, env(), COMMAND_LIMIT).ok(up);
    int port = publishedPort();
    HttpClient http = HttpClient.newHttpClient();
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptions()
        .until(() -> healthz(http, port) == 200);
    report("healthy %d ms after compose up", upStart);

    List<String> sandboxes = new ArrayList<>();
    try (BoxSocket rpc =
        BoxSocket.connect(
            port,
            "/rpc/ws",
            Map.of("X-LangBot-Instance-Id", INSTANCE, "X-LangBot-Box-Control-Token", TOKEN))) {
      assertThat(data(call(rpc, "__ping", JSON.createObjectNode(), null))).isNotNull();
      data(call(rpc, "box_init", langBotsBoxConfig(), null));
      assertThat(boxRoot.resolve("default")).isDirectory();

      JsonNode exec =
          data(
              call(
                  rpc,
                  "box_exec",
                  execSpec(
                      "person_1001",
                      "printf 'written in the sandbox\\n' > /workspace/from-sandbox.txt && id -u",
                      "off"),
                  context()));
      assertThat(exec.path("exit_code").asInt(-1)).as(exec.toString()).isZero();
      assertThat(exec.path("stdout").asText()).isEqualTo("1000");
      assertThat(boxRoot.resolve("default/from-sandbox.txt"))
          .hasContent("written in the sandbox\n");

      // LangBot's network_basic profile: Box loads the sandbox's firewall from its container.
      JsonNode online =
          data(call(rpc, "box_exec", execSpec("person_1002", "echo on", "on"), context()));
      assertThat(online.path("stdout").asText()).as(online.toString()).isEqualTo("on");

      for (String session : List.of("person_1001", "person_1002")) {
        sandboxes.add(
            data(call(rpc, "box_get_session", sessionId(session), context()))
                .path("backend_session_id")
                .asText());
      }
    }
    assertThat(sandboxes).allSatisfy(id -> assertThat(id).isNotBlank());

    List<String> down = compose("down", "--timeout", "30");
    Command.run(down, dir, env(), COMMAND_LIMIT).ok(down);
    composed = false;
    assertThat(dockerLines("ps", "-aq", "--filter", "label=com.docker.compose.project=" + project))
        .as("the compose project's containers")
        .isEmpty();
    assertThat(dockerLines("network", "ls", "-q", "--filter", "name=" + project + "_"))
        .as("the compose project's network")
        .isEmpty();
    assertThat(
            dockerLines(
                "ps",
                "-aq",
                "--filter",
                "label=langbot.box=true",
                "--filter",
                "label=dev.box.data=" + dataLabel(boxRoot)))
        .as("the sandboxes of this Box (%s)", sandboxes)
        .isEmpty();
  }

  /**
   * The {@code box} section LangBot forwards with its defaults and the overrides of its compose
   * file ({@code BOX__LOCAL__*}, {@code BOX__DOCKER__CPU_LIMIT_ENABLED}), environment values as
   * strings; only {@code local.image} is the test's.
   */
  private ObjectNode langBotsBoxConfig() throws IOException {
    String root = boxRoot.toString();
    return (ObjectNode)
        JSON.readTree(
            """
            {"enabled": true, "backend": "local",
             "limits": {"max_sessions": 64, "max_managed_processes": 64,
                        "max_completed_processes": 256, "max_workspace_entries": 100000,
                        "max_admission_records": 100000, "max_rpc_file_bytes": 20971520},
             "local": {"profile": "default", "image": "%s", "host_root": "%s",
                       "default_workspace": "default", "skills_root": "skills",
                       "allowed_mount_roots": "%s", "workspace_quota_mb": null},
             "default_memory_mb": 1536,
             "docker": {"cpu_limit_enabled": "true"},
             "e2b": {"api_key": "", "api_url": "", "template": ""}}
            """
                .formatted(sandboxImage(), root, root));
  }

  /** An exec as LangBot's exec tool sends it: the default workspace mounted at /workspace. */
  private ObjectNode execSpec(String session, String cmd, String network) {
    ObjectNode spec = sessionId(session);
    spec.put("cmd", cmd)
        .put("workdir", "/workspace")
        .put("timeout_sec", 30)
        .put("network", network)
        .put("host_path", boxRoot.resolve("default").toString())
        .put("host_path_mode", "rw")
        .put("mount_path", "/workspace");
    return spec;
  }

  private static ObjectNode sessionId(String session) {
    return JSON.createObjectNode().put("session_id", session);
  }

  private static ObjectNode context() {
    return JSON.createObjectNode()
        .put("instance_uuid", INSTANCE)
        .put("workspace_uuid", "ws-compose")
        .put("placement_generation", 1);
  }

  /** Sends an action and reads frames up to its answer. */
  private JsonNode call(BoxSocket rpc, String action, ObjectNode data, @Nullable ObjectNode context)
      throws IOException {
    int id = seq.incrementAndGet();
    ObjectNode request = JSON.createObjectNode().put("seq_id", id).put("action", action);
    request.set("data", data);
    if (context != null) {
      request.set("context", context);
    }
    rpc.send(JSON.writeValueAsString(request));
    while (true) {
      JsonNode frame = JSON.readTree(rpc.nextText());
      if (frame.has("code") && frame.path("seq_id").asInt() == id) {
        return frame;
      }
    }
  }

  private static JsonNode data(JsonNode response) {
    assertThat(response.path("code").asInt(-1)).as(response.toString()).isZero();
    return response.path("data");
  }

  private List<String> compose(String... args) {
    List<String> argv =
        new ArrayList<>(
            List.of(
                "docker",
                "compose",
                "-p",
                project,
                "-f",
                "docker-compose.yaml",
                "-f",
                "docker-compose.box.yaml",
                "-f",
                "loopback-port.yaml",
                "--profile",
                "box"));
    argv.addAll(List.of(args));
    return argv;
  }

  /** What an operator's shell gives compose: the project directory as PWD, the token in .env. */
  private Map<String, @Nullable String> env() {
    Map<String, @Nullable String> env = new LinkedHashMap<>();
    env.put("PWD", dir.toString());
    env.put("LANGBOT_BOX_ROOT", null);
    env.put("LANGBOT_BOX_CONTROL_TOKEN", TOKEN);
    env.put("BOX_RUNTIME_IMAGE", IMAGE_TAG);
    env.put("BOX_BACKEND", null);
    return env;
  }

  private int publishedPort() throws Exception {
    List<String> argv = compose("port", "langbot_box", "5410");
    String address = Command.run(argv, dir, env(), COMMAND_LIMIT).ok(argv).output().strip();
    assertThat(address).startsWith("127.0.0.1:");
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
  }

  private static int healthz(HttpClient http, int port) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private List<String> dockerLines(String... args) throws Exception {
    List<String> argv = docker(args);
    return Command.run(argv, repo, Map.of(), COMMAND_LIMIT)
        .ok(argv)
        .output()
        .lines()
        .filter(line -> !line.isBlank())
        .toList();
  }

  private static List<String> docker(String... args) {
    List<String> argv = new ArrayList<>(List.of("docker"));
    argv.addAll(List.of(args));
    return argv;
  }

  private static String sandboxImage() {
    return System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm");
  }

  /** The label Box's Docker backend puts on its containers: a hash of its data directory. */
  /** The label Box gives its sandboxes: the hash of the state dir inside its data dir. */
  private static String dataLabel(Path dataDir) throws NoSuchAlgorithmException {
    byte[] digest =
        MessageDigest.getInstance("SHA-256")
            .digest(BoxDataDir.stateDir(dataDir).toString().getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(digest, 0, 4);
  }

  private static void copyResource(String name, Path target) throws IOException {
    try (InputStream in =
        Objects.requireNonNull(
            ComposeOverrideTest.class.getResourceAsStream(name), "resource " + name)) {
      Files.copy(in, target);
    }
  }

  private static void report(String format, long startNanos) {
    System.out.printf(
        "box-image: " + format + "%n", Duration.ofNanos(System.nanoTime() - startNanos).toMillis());
  }
}
