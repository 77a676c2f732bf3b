package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.testclient.Answer;
import dev.box.testclient.BoxSocket;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Who may drive the API: a server started with no token configured generates one in its data
 * directory and requires it on every route but the probes; {@code insecure} leaves it open.
 */
class ControlTokenTest {
  private static final String TOKEN_FILE = ".box-state/control-token";

  private static TestServer box;

  @BeforeAll
  static void start() {
    box = TestServer.start();
    box.post("/v1/sessions/present", "{}");
  }

  @AfterAll
  static void stop() {
    box.close();
  }

  @ParameterizedTest
  @CsvSource({
    "GET, /v1/health",
    "GET, /v1/status",
    "GET, /v1/sessions",
    "GET, /v1/sessions/present",
    "POST, /v1/sessions/new",
    "DELETE, /v1/sessions/present",
    "POST, /v1/sessions/present/exec",
    "POST, /v1/sessions/present/managed-process",
    "GET, /v1/sessions/present/managed-process",
    "GET, /v1/sessions/present/managed-process/p",
    "DELETE, /v1/sessions/present/managed-process/p",
    "GET, /v2/no-such-route",
    "PUT, /v1/sessions",
    "GET, /v1/sessions/",
    "GET, //v1/sessions",
    "GET, /healthz/",
    "GET, /HEALTHZ",
    "GET, /healthz/..%2Fv1/sessions",
    "GET, /rpc/ws",
  })
  void withoutAToken_everyRouteButTheProbes_is401WithAJsonError(String method, String path) {
    Answer a = box.send(method, path, "{\"cmd\":\"true\",\"command\":\"cat\"}", Map.of());

    assertThat(a.status()).isEqualTo(401);
    assertThat(a.errorCode()).isEqualTo("unauthorized");
    assertThat(a.errorMessage())
        .isEqualTo("missing control token: send it as 'Authorization:" + " Bearer <token>'");
    assertThat(box.get("/v1/sessions/present").status())
        .as("the session is untouched")
        .isEqualTo(200);
  }

  /** HEAD and OPTIONS need the token as GET does; the probes answer without one. */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "HEAD, /v1/sessions, 401",
    "OPTIONS, /v1/sessions, 401",
    "GET, /healthz, 200",
    "GET, /readyz, 200"
  })
  void withoutAToken_theProbesAnswer_andHeadAndOptionsAre401(
      String method, String path, int status) {
    assertThat(box.send(method, path, "", Map.of()).status()).isEqualTo(status);
  }

  @Test
  void theConfigsText_neverShowsTheToken() {
    String token = "a-configured-token-that-is-long-enough";
    ServerConfig config = ServerConfig.resolve(Map.of("control_token", token), Map.of());

    assertThat(config.toString()).contains("controlToken=<set>").doesNotContain(token);
  }

  @Test
  void aWrongToken_is401_inEitherHeader_andTheRightOneIsAcceptedInEither() {
    String token = Objects.requireNonNull(box.token());
    Answer wrongBearer = box.send("GET", "/v1/sessions", "", Map.of("Authorization", "Bearer x"));
    Answer prefix =
        box.send(
            "GET",
            "/v1/sessions",
            "",
            Map.of("Authorization", "Bearer " + token.substring(0, token.length() - 1)));
    Answer wrongLangBot =
        box.send("GET", "/v1/sessions", "", Map.of("X-LangBot-Box-Control-Token", token + "x"));
    Answer basic = box.send("GET", "/v1/sessions", "", Map.of("Authorization", token));

    for (Answer a : List.of(wrongBearer, prefix, wrongLangBot)) {
      assertThat(a.status()).isEqualTo(401);
      assertThat(a.errorMessage()).isEqualTo("invalid control token");
    }
    assertThat(basic.status()).isEqualTo(401);
    assertThat(basic.body().toString()).doesNotContain(token);
    assertThat(box.send("GET", "/v1/sessions", "", Map.of("Authorization", "bearer " + token)))
        .extracting(Answer::status)
        .isEqualTo(200);
    assertThat(box.send("GET", "/v1/sessions", "", Map.of("X-LangBot-Box-Control-Token", token)))
        .extracting(Answer::status)
        .isEqualTo(200);
  }

  @Test
  void webSocketUpgrades_withoutAToken_areRefusedBeforeTheUpgrade() {
    box.post(
        "/v1/sessions/present/managed-process", "{\"process_id\":\"cat\",\"command\":\"cat\"}");

    Answer relay = WsClient.refusal(box, "/v1/sessions/present/managed-process/cat/ws", Map.of());
    Answer missingProcess =
        WsClient.refusal(box, "/v1/sessions/present/managed-process/none/ws", Map.of());
    Answer wrong =
        WsClient.refusal(
            box,
            "/v1/sessions/present/managed-process/cat/ws",
            Map.of("Authorization", "Bearer wrong"));
    Answer unknown = WsClient.refusal(box, "/v1/unknown/ws", Map.of());

    assertThat(relay.status()).isEqualTo(401);
    assertThat(relay.errorCode()).isEqualTo("unauthorized");
    assertThat(missingProcess.status()).as("no hint whether the process exists").isEqualTo(401);
    assertThat(wrong.status()).isEqualTo(401);
    assertThat(unknown.status()).as(unknown.body().toString()).isEqualTo(401);
    assertThat(unknown.errorCode()).isEqualTo("unauthorized");
    assertThat(WsClient.refusal(box, "/v1/unknown/ws").errorCode()).isEqualTo("not_found");
    assertThat(rpcHandshake(box.server.port(), Map.of("X-LangBot-Instance-Id", "i-1")))
        .isEqualTo(401);
    assertThat(
            rpcHandshake(
                box.server.port(),
                Map.of("X-LangBot-Instance-Id", "i-1", "X-LangBot-Box-Control-Token", "wrong")))
        .isEqualTo(401);
    try (BoxSocket client = WsClient.connect(box, "/v1/sessions/present/managed-process/cat/ws")) {
      client.send("through");
      assertThat(client.nextText()).isEqualTo("through");
    }
  }

  @Test
  void theGeneratedToken_isInAFileOfMode0600_andSurvivesARestart(@TempDir Path dataDir) {
    String first;
    try (BoxServer server = start(dataDir)) {
      first = Objects.requireNonNull(server.controlToken());
    }
    Path file = dataDir.resolve(TOKEN_FILE);

    assertThat(first).matches("[A-Za-z0-9_-]{43}");
    assertThat(file).hasContent(first);
    assertThat(permissions(file)).isEqualTo("rw-------");
    assertThat(file.getParent())
        .isDirectoryNotContaining(p -> p.getFileName().toString().startsWith("."));
    try (BoxServer again = start(dataDir)) {
      assertThat(again.controlToken()).isEqualTo(first);
    }
    try (BoxServer other = start(dataDir.resolve("other"))) {
      assertThat(other.controlToken()).isNotEqualTo(first);
    }
  }

  @Test
  void aTokenFileWithLooserPermissions_isRefusedAtStartup(@TempDir Path dataDir)
      throws IOException {
    String token = "a-token-someone-else-may-have-read-0123456789";
    Path file = tokenFile(dataDir, token);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));

    assertThatThrownBy(() -> start(dataDir))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("refusing the control token file " + file)
        .hasMessageContaining("rw-r--r--")
        .hasMessageContaining("Delete it")
        .hasMessageNotContaining(token);
    assertThat(permissions(file))
        .as("not repaired behind the operator's back")
        .isEqualTo("rw-r--r--");
  }

  @Test
  void anEmptyShortLinkedOrDirectoryTokenFile_isRefusedAtStartup(@TempDir Path root)
      throws IOException {
    Path empty = owned(Files.createDirectories(root.resolve("empty")), " \n");
    Path shortToken = owned(Files.createDirectories(root.resolve("short")), "abc");
    Path linked = Files.createDirectories(root.resolve("linked"));
    Path target = owned(Files.createDirectories(root.resolve("target")), "t".repeat(40));
    Files.createDirectories(linked.resolve(TOKEN_FILE).getParent());
    Files.createSymbolicLink(linked.resolve(TOKEN_FILE), target.resolve(TOKEN_FILE));
    Path directory = Files.createDirectories(root.resolve("directory"));
    Files.createDirectories(directory.resolve(TOKEN_FILE));

    assertThatThrownBy(() -> start(empty)).hasMessageContaining("is empty");
    assertThatThrownBy(() -> start(shortToken)).hasMessageContaining("fewer than 32 characters");
    assertThatThrownBy(() -> start(linked)).hasMessageContaining("is a symbolic link");
    assertThatThrownBy(() -> start(directory)).hasMessageContaining("is not a regular file");
  }

  @Test
  void aTokenWrittenIntoTheFileByTheOperator_isUsed(@TempDir Path dataDir) throws IOException {
    String token = "operator-chosen-token-0123456789abcdef";
    owned(dataDir, token + "\n");

    try (BoxServer server = start(dataDir)) {
      assertThat(server.controlToken()).isEqualTo(token);
    }
  }

  @Test
  void insecure_leavesTheApiOpen_andWritesNoTokenFile() {
    try (TestServer open = TestServer.start("insecure", "true")) {
      assertThat(open.token()).isNull();
      assertThat(open.send("GET", "/v1/sessions", "", Map.of()).status()).isEqualTo(200);
      assertThat(open.dataDir.resolve(TOKEN_FILE)).doesNotExist();
    }
  }

  @Test
  void aConfiguredToken_isTheToken_andNoFileIsWritten() {
    String token = "a-configured-token-that-is-long-enough";
    try (TestServer configured = TestServer.start("control_token", token, "insecure", "true")) {
      assertThat(configured.token()).isEqualTo(token);
      assertThat(configured.send("GET", "/v1/sessions", "", Map.of()).status()).isEqualTo(401);
      assertThat(configured.get("/v1/sessions").status()).isEqualTo(200);
      assertThat(configured.dataDir.resolve(TOKEN_FILE)).doesNotExist();
    }
  }

  @Test
  void langBotsToken_isTheTokenOfEveryRoute_andNoFileIsWritten(@TempDir Path dataDir)
      throws IOException {
    String token = "langbot-token-0123456789-0123456789";
    Map<String, String> flags = flags(dataDir);
    try (BoxServer server =
        BoxServer.start(
            ServerConfig.resolve(flags, Map.of()),
            Clock.systemUTC(),
            Map.of("LANGBOT_BOX_CONTROL_TOKEN", token),
            false)) {
      assertThat(server.controlToken()).isEqualTo(token);
      assertThat(dataDir.resolve(TOKEN_FILE)).doesNotExist();
      assertThat(rpcHandshake(server.port(), Map.of("X-LangBot-Instance-Id", "i-1")))
          .isEqualTo(401);
      assertThat(
              rpcHandshake(
                  server.port(),
                  Map.of("X-LangBot-Instance-Id", "i-1", "X-LangBot-Box-Control-Token", token)))
          .isEqualTo(101);
    }
  }

  @Test
  void aPublicAddressWithoutAConfiguredToken_isProtectedByTheGeneratedOne(@TempDir Path dataDir) {
    Map<String, String> flags = flags(dataDir);
    flags.put("host", "0.0.0.0");
    try (BoxServer server = BoxServer.start(ServerConfig.resolve(flags, Map.of()))) {
      assertThat(server.controlToken()).isEqualTo(readToken(dataDir));
      assertThat(anonymousStatus(server.port(), "/v1/sessions")).isEqualTo(401);
    }
  }

  @Test
  void aSandbox_cannotReadTheToken_throughItsEnvironmentOrAMount() throws IOException {
    String token = Objects.requireNonNull(box.token());
    Path link =
        Files.createSymbolicLink(
            box.dataDir.resolveSibling(box.dataDir.getFileName() + "-link"), box.dataDir);
    try {
      List<String> refused =
          List.of(
              box.dataDir.toString(),
              box.dataDir.resolve(TOKEN_FILE).toString(),
              link.toString(),
              link.resolve(TOKEN_FILE).toString(),
              Objects.requireNonNull(box.dataDir.getParent()).toString());
      for (String path : refused) {
        Answer direct = box.post("/v1/sessions/mount", "{\"host_path\":" + quote(path) + "}");
        Answer extra =
            box.post(
                "/v1/sessions/mount",
                "{\"extra_mounts\":[{\"host_path\":"
                    + quote(path)
                    + ",\"mount_path\":\"/mnt/x\",\"mode\":\"ro\"}]}");
        assertThat(direct.status()).as(path).isEqualTo(400);
        assertThat(direct.errorMessage()).as(path).contains("blocked");
        assertThat(extra.status()).as(path).isEqualTo(400);
        assertThat(extra.errorMessage()).as(path).contains("blocked");
      }

      Answer env =
          box.exec(
              "env-check",
              "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; ls -a /workspace /tmp ~",
              "");
      assertThat(env.status()).isEqualTo(200);
      assertThat(env.text("stdout")).doesNotContain(token).doesNotContain("control-token");
    } finally {
      Files.delete(link);
    }
  }

  @Test
  void aSandboxWithNetworkOn_doesNotReachTheApiAtAll() {
    Answer a =
        box.exec(
            "net-on-api",
            "bash -c 'exec 3<>/dev/tcp/127.0.0.1/"
                + box.server.port()
                + "' 2>/dev/null; echo rc=$?",
            "\"network\":\"on\"");

    // Its loopback is its own: nothing listens there, and the host's is out of reach.
    assertThat(a.text("stdout")).isEqualTo("rc=1\n");
  }

  private static BoxServer start(Path dataDir) {
    return BoxServer.start(ServerConfig.resolve(flags(dataDir), Map.of()));
  }

  private static Map<String, String> flags(Path dataDir) {
    Map<String, String> flags = new HashMap<>();
    flags.put("port", "0");
    flags.put("data_dir", dataDir.toString());
    flags.put("backend", "bwrap");
    return flags;
  }

  /** Writes {@code content} as {@code dir}'s token file, with mode 0600. */
  private static Path owned(Path dir, String content) throws IOException {
    Path file = tokenFile(dir, content);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    return dir;
  }

  /** Writes {@code content} as {@code dataDir}'s token file, making its state dir first. */
  private static Path tokenFile(Path dataDir, String content) throws IOException {
    Path file = dataDir.resolve(TOKEN_FILE);
    Files.createDirectories(file.getParent());
    return Files.writeString(file, content);
  }

  private static String readToken(Path dataDir) {
    try {
      return Files.readString(dataDir.resolve(TOKEN_FILE), StandardCharsets.US_ASCII).strip();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static String permissions(Path file) {
    try {
      return PosixFilePermissions.toString(Files.getPosixFilePermissions(file));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static String quote(String text) {
    try {
      return TestServer.JSON.writeValueAsString(text);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static int anonymousStatus(int port, String path) {
    try {
      return HttpClient.newHttpClient()
          .send(
              java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              java.net.http.HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      throw new AssertionError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The status of a handshake on {@code /rpc/ws}: 101 when it was accepted. */
  private static int rpcHandshake(int port, Map<String, String> headers) {
    return RpcClient.handshakeStatus(port, "/rpc/ws", headers);
  }
}
