package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * E2B's API as served at {@code /e2b}, where E2B's SDK does not reach: its credentials, its error
 * shapes for bad input, the refusals of what Box cannot apply, and paths that must stay inside the
 * sandbox. A real server on bubblewrap, spoken to over raw HTTP.
 */
class E2bApiTest {
  private static TestServer box;
  private static String sandboxId;
  private static String accessToken;

  @BeforeAll
  static void start() {
    box = TestServer.start();
    Answer created = control("POST", "/e2b/v2/sandboxes", "{\"metadata\":{\"k\":\"v\"}}");
    assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
    sandboxId = created.text("sandboxID");
    accessToken = created.text("envdAccessToken");
  }

  @AfterAll
  static void stop() {
    box.close();
  }

  private static Answer control(String method, String path, String body) {
    return box.send(method, path, body, Map.of("X-API-Key", String.valueOf(box.token())));
  }

  private static Answer envd(String method, String path, String body, Map<String, String> extra) {
    Map<String, String> headers = new HashMap<>();
    headers.put("E2b-Sandbox-Id", sandboxId);
    headers.put("X-Access-Token", accessToken);
    headers.put("Content-Type", "application/json");
    headers.putAll(extra);
    return box.send(method, "/e2b/envd" + path, body, headers);
  }

  /** Stat of {@code /} with {@code extra} headers. */
  private static Answer statRoot(Map<String, String> extra) {
    return envd("POST", "/filesystem.Filesystem/Stat", "{\"path\":\"/\"}", extra);
  }

  private static Answer rpc(String method, String body) {
    return envd("POST", "/filesystem.Filesystem/" + method, body, Map.of());
  }

  @Test
  void sandbox_isAnOrdinarySession() {
    assertThat(box.get("/v1/sessions").body().findValuesAsText("session_id"))
        .contains("e2b-" + sandboxId);
  }

  @Test
  void controlPlane_refusesAMissingOrWrongKey_andTheBearerToken() {
    Answer none = box.send("GET", "/e2b/v2/sandboxes", "", Map.of());
    assertThat(none.status()).isEqualTo(401);
    assertThat(none.body().path("code").asInt()).isEqualTo(401);
    assertThat(none.body().path("message").asText()).contains("X-API-Key");
    assertThat(box.send("GET", "/e2b/v2/sandboxes", "", Map.of("X-API-Key", "wrong")).status())
        .isEqualTo(401);
    assertThat(box.send("GET", "/e2b/v2/sandboxes", "", box.headers()).status()).isEqualTo(401);
  }

  @Test
  void controlPlane_answersE2bNotFound_withTheCodeInTheBody() {
    Answer missing = control("GET", "/e2b/sandboxes/nosuchsandbox", "");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.body().path("code").asInt()).isEqualTo(404);
    assertThat(control("GET", "/e2b/no/such/route", "").body().path("code").asInt()).isEqualTo(404);
  }

  @Test
  void create_refusesWhatBoxCannotApply() {
    assertRefused("{\"templateID\":\"python\"}", 404, "template 'python' not found");
    assertRefused("{\"surprise\":1}", 400, "unknown field 'surprise'");
    assertRefused(
        "{\"network\":{\"allowOut\":[\"stand-in.invalid\"],\"denyOut\":[\"0.0.0.0/0\"]}}",
        400,
        "not domains");
    assertRefused("{\"network\":{\"egressProxy\":{\"address\":\"p:1\"}}}", 501, "egressProxy");
    assertRefused("{\"autoPause\":true}", 501, "auto-pause is not supported by Box yet");
    assertRefused("{\"timeout\":0}", 400, "timeout must be 1 to");
    assertRefused("[1]", 400, "JSON object");
    assertRefused("{not json", 400, "not valid JSON");
    assertRefused("{\"metadata\":\"" + "x".repeat(300_000) + "\"}", 413, "larger than");
  }

  private static void assertRefused(String body, int status, String message) {
    Answer answer = control("POST", "/e2b/v2/sandboxes", body);
    assertThat(answer.status()).as(answer.body().toString()).isEqualTo(status);
    assertThat(answer.body().path("code").asInt()).isEqualTo(status);
    assertThat(answer.body().path("message").asText()).contains(message);
  }

  @Test
  void fork_startsNewSandboxes_whoseFilesMatchTheSource_thenDiverge() {
    Answer made = control("POST", "/e2b/v2/sandboxes", "{\"metadata\":{\"k\":\"forked\"}}");
    String source = made.text("sandboxID");
    String sourceToken = made.text("envdAccessToken");
    assertThat(sh(source, sourceToken, "echo before > /home/user/a; cat /home/user/a"))
        .isEqualTo("before\n");

    Answer forked =
        control("POST", "/e2b/sandboxes/" + source + "/fork", "{\"count\":2,\"timeout\":60}");

    assertThat(forked.status()).as(forked.body().toString()).isEqualTo(201);
    assertThat(forked.body().size()).isEqualTo(2);
    List<String> ids = forked.body().findValuesAsText("sandboxID");
    List<String> tokens = forked.body().findValuesAsText("envdAccessToken");
    assertThat(ids).hasSize(2).doesNotHaveDuplicates().doesNotContain(source);
    assertThat(tokens).hasSize(2).doesNotHaveDuplicates().doesNotContain(sourceToken);
    sh(source, sourceToken, "echo after > /home/user/a");
    for (int i = 0; i < 2; i++) {
      assertThat(sh(ids.get(i), tokens.get(i), "cat /home/user/a")).isEqualTo("before\n");
      Answer detail = control("GET", "/e2b/sandboxes/" + ids.get(i), "");
      assertThat(detail.body().path("metadata").path("k").asText()).isEqualTo("forked");
    }
    sh(ids.get(0), tokens.get(0), "echo mine > /home/user/a");
    assertThat(sh(ids.get(1), tokens.get(1), "cat /home/user/a")).isEqualTo("before\n");
    assertThat(sh(source, sourceToken, "cat /home/user/a")).isEqualTo("after\n");
    for (String id : List.of(source, ids.get(0), ids.get(1))) {
      assertThat(control("DELETE", "/e2b/sandboxes/" + id, "").status()).isEqualTo(204);
    }
  }

  @Test
  void fork_refusesBadBodies_unknownSandboxes_andAMissingKey() {
    String path = "/e2b/sandboxes/" + sandboxId + "/fork";
    assertBadRequests(
        path,
        List.of(
            "{\"count\":0}",
            "{\"count\":11}",
            "{\"count\":\"2\"}",
            "{\"count\":1.5}",
            "{\"timeout\":0}",
            "{\"other\":1}",
            "[1]",
            "{"));
    assertThat(control("POST", "/e2b/sandboxes/nosuch/fork", "{}").status()).isEqualTo(404);
    assertThat(box.send("POST", path, "{}", Map.of()).status()).isEqualTo(401);
    assertThat(box.send("GET", "/e2b/snapshots", "", Map.of()).status()).isEqualTo(401);
    assertThat(box.send("DELETE", "/e2b/templates/x", "", Map.of()).status()).isEqualTo(401);
  }

  @Test
  void snapshot_isATemplate_whoseSandboxesStartWithItsFiles() {
    Answer sourceMade = control("POST", "/e2b/v2/sandboxes", "{}");
    String source = sourceMade.text("sandboxID");
    String sourceToken = sourceMade.text("envdAccessToken");
    sh(source, sourceToken, "echo kept > /home/user/k");

    Answer named =
        control("POST", "/e2b/sandboxes/" + source + "/snapshots", "{\"name\":\"e2b-kept\"}");
    Answer unnamed = control("POST", "/e2b/sandboxes/" + source + "/snapshots", "");

    assertThat(named.status()).as(named.body().toString()).isEqualTo(201);
    assertThat(named.text("snapshotID")).isEqualTo("e2b-kept");
    assertThat(named.body().path("names").get(0).asText()).isEqualTo("e2b-kept");
    assertThat(unnamed.status()).as(unnamed.body().toString()).isEqualTo(201);
    String generated = unnamed.text("snapshotID");
    sh(source, sourceToken, "echo later > /home/user/k");
    Answer made = control("POST", "/e2b/v2/sandboxes", "{\"templateID\":\"e2b-kept\"}");
    assertThat(made.status()).as(made.body().toString()).isEqualTo(201);
    assertThat(made.text("templateID")).isEqualTo("e2b-kept");
    String madeToken = made.text("envdAccessToken");
    assertThat(sh(made.text("sandboxID"), madeToken, "cat /home/user/k")).isEqualTo("kept\n");

    Answer ofSource = control("GET", "/e2b/snapshots?sandboxID=" + source, "");
    assertThat(ofSource.body().findValuesAsText("snapshotID"))
        .containsExactlyInAnyOrder("e2b-kept", generated);
    assertThat(
            control("GET", "/e2b/snapshots?name=e2b-kept", "")
                .body()
                .findValuesAsText("snapshotID"))
        .containsExactly("e2b-kept");
    String pages = "/e2b/snapshots?sandboxID=" + source + "&limit=1";
    List<String> first = control("GET", pages, "").body().findValuesAsText("snapshotID");
    List<String> second =
        control("GET", pages + "&nextToken=1", "").body().findValuesAsText("snapshotID");
    assertThat(first).hasSize(1);
    assertThat(second).hasSize(1).doesNotContainAnyElementsOf(first);

    assertThat(control("DELETE", "/e2b/templates/e2b-kept", "").status()).isEqualTo(204);
    assertThat(control("DELETE", "/e2b/templates/e2b-kept", "").status()).isEqualTo(404);
    assertThat(control("DELETE", "/e2b/templates/" + generated, "").status()).isEqualTo(204);
    assertThat(control("GET", "/e2b/snapshots?sandboxID=" + source, "").body().size()).isZero();
    assertThat(sh(made.text("sandboxID"), madeToken, "cat /home/user/k"))
        .as("a sandbox made from a deleted snapshot keeps its files")
        .isEqualTo("kept\n");
    assertThat(control("POST", "/e2b/v2/sandboxes", "{\"templateID\":\"e2b-kept\"}").status())
        .isEqualTo(404);
    control("DELETE", "/e2b/sandboxes/" + source, "");
    control("DELETE", "/e2b/sandboxes/" + made.text("sandboxID"), "");
  }

  @Test
  void snapshot_refusesBadNames_unknownSandboxes_andBadQueries() {
    String path = "/e2b/sandboxes/" + sandboxId + "/snapshots";
    assertBadRequests(
        path,
        List.of(
            "{\"name\":\"team/x:v1\"}",
            "{\"name\":\"../x\"}",
            "{\"name\":\"\"}",
            "{\"name\":1}",
            "{\"name\":\"base\"}",
            "{\"other\":1}",
            "[1]"));
    assertThat(control("POST", "/e2b/sandboxes/nosuch/snapshots", "{}").status()).isEqualTo(404);
    assertThat(control("GET", "/e2b/snapshots?limit=0", "").status()).isEqualTo(400);
    assertThat(control("GET", "/e2b/snapshots?nextToken=x", "").status()).isEqualTo(400);
    assertThat(control("DELETE", "/e2b/templates/nosuch", "").status()).isEqualTo(404);
    assertThat(control("DELETE", "/e2b/templates/a%2F..", "").status()).isEqualTo(404);
    Answer taken = control("POST", path, "{\"name\":\"e2b-twice\"}");
    assertThat(taken.status()).isEqualTo(201);
    assertThat(control("POST", path, "{\"name\":\"e2b-twice\"}").status()).isEqualTo(409);
    assertThat(control("DELETE", "/e2b/templates/e2b-twice", "").status()).isEqualTo(204);
  }

  @Test
  void metrics_measureTheSandboxesSessionNow() {
    List<JsonNode> wrote =
        stream(
            "Start",
            "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"head -c 3000000 /dev/zero"
                + " > metrics.bin\"]}}",
            Map.of());
    assertThat(endCode(wrote)).isEmpty();

    Answer metrics = control("GET", "/e2b/sandboxes/" + sandboxId + "/metrics?start=1&end=2", "");

    assertThat(metrics.status()).as(metrics.body().toString()).isEqualTo(200);
    assertThat(metrics.body()).hasSize(1);
    JsonNode metric = metrics.body().get(0);
    assertThat(java.time.Instant.parse(metric.path("timestamp").asText()).getEpochSecond())
        .isEqualTo(metric.path("timestampUnix").asLong());
    assertThat(metric.path("cpuCount").asInt()).isEqualTo(1);
    assertThat(metric.path("cpuUsedPct").asDouble()).isBetween(0.0, 100.0);
    assertThat(metric.path("memTotal").asLong()).isEqualTo(512L * 1024 * 1024);
    assertThat(metric.path("memUsed").asLong()).isPositive().isLessThan(512L * 1024 * 1024);
    assertThat(metric.path("memCache").asLong()).isNotNegative();
    assertThat(metric.path("diskUsed").asLong()).isGreaterThanOrEqualTo(3_000_000);
    assertThat(metric.path("diskTotal").asLong())
        .isGreaterThanOrEqualTo(metric.path("diskUsed").asLong());
  }

  @Test
  void metrics_ofSeveralSandboxes_leaveUnknownOnesOut() {
    Answer both = control("GET", "/e2b/sandboxes/metrics?sandbox_ids=" + sandboxId + ",nosuch", "");

    assertThat(both.status()).as(both.body().toString()).isEqualTo(200);
    assertThat(both.body().path("sandboxes").fieldNames()).toIterable().containsExactly(sandboxId);
    assertThat(both.body().at("/sandboxes/" + sandboxId + "/cpuCount").asInt()).isEqualTo(1);
    assertThat(control("GET", "/e2b/sandboxes/metrics", "").status()).isEqualTo(400);
  }

  @Test
  void metrics_refuseAMissingKey_unknownSandboxes_andBadTimes() {
    String path = "/e2b/sandboxes/" + sandboxId + "/metrics";
    assertThat(box.send("GET", path, "", Map.of()).status()).isEqualTo(401);
    assertThat(control("GET", "/e2b/sandboxes/nosuch/metrics", "").body().path("code").asInt())
        .isEqualTo(404);
    Answer bad = control("GET", path + "?start=yesterday", "");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().path("message").asText()).contains("start must be a whole number");
    assertThat(control("GET", path + "?start=20&end=10", "").status()).isEqualTo(400);
  }

  @Test
  void logs_tellTheCommandsStartedAndEnded() {
    String marker = "logged" + System.nanoTime();
    List<JsonNode> ran =
        stream(
            "Start",
            "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"exit 3\",\"" + marker + "\"]}}",
            Map.of());
    int pid = ran.get(0).at("/message/event/start/pid").asInt();
    String v2 = "/e2b/v2/sandboxes/" + sandboxId + "/logs";

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(
                        control("GET", v2 + "?search=process%20" + pid + "%20", "")
                            .body()
                            .path("logs")
                            .findValuesAsText("message"))
                    .containsExactly(
                        "process " + pid + " started: /bin/sh -c exit 3 " + marker,
                        "process " + pid + " ended: exit code 3"));
    JsonNode newest = control("GET", v2 + "?direction=backward&limit=1", "").body().path("logs");
    assertThat(newest).hasSize(1);
    assertThat(newest.get(0).path("level").asText()).isEqualTo("info");
    assertThat(newest.get(0).at("/fields/pid").asText()).isNotEmpty();
    assertThat(control("GET", v2 + "?level=error", "").body().path("logs")).isEmpty();
    JsonNode v1 = control("GET", "/e2b/sandboxes/" + sandboxId + "/logs?start=0", "").body();
    assertThat(v1.path("logs").findValuesAsText("line"))
        .contains("process " + pid + " ended: exit code 3");
    assertThat(v1.path("logEntries").size()).isEqualTo(v1.path("logs").size());
    assertThat(v1.path("logs").get(0).path("line").asText()).startsWith("sandbox created");
  }

  @Test
  void logs_refuseBadQueries_andUnknownSandboxes() {
    String v2 = "/e2b/v2/sandboxes/" + sandboxId + "/logs";
    assertThat(control("GET", v2 + "?level=loud", "").status()).isEqualTo(400);
    assertThat(control("GET", v2 + "?direction=sideways", "").status()).isEqualTo(400);
    assertThat(control("GET", v2 + "?limit=1001", "").status()).isEqualTo(400);
    assertThat(control("GET", "/e2b/v2/sandboxes/nosuch/logs", "").status()).isEqualTo(404);
    assertThat(control("GET", "/e2b/sandboxes/nosuch/logs", "").status()).isEqualTo(404);
    assertThat(box.send("GET", v2, "", Map.of()).status()).isEqualTo(401);
  }

  @Test
  void networkUpdate_changingTheNetwork_isRefused_neverIgnored() {
    String path = "/e2b/sandboxes/" + sandboxId + "/network";
    assertThat(control("PUT", path, "{}").status()).as("the network it has").isEqualTo(204);
    assertThat(control("PUT", path, "{\"allow_internet_access\":true}").status()).isEqualTo(204);

    Answer change = control("PUT", path, "{\"denyOut\":[\"198.51.100.7/32\"]}");
    assertThat(change.status()).isEqualTo(501);
    assertThat(change.body().path("code").asInt()).isEqualTo(501);
    assertThat(change.body().path("message").asText()).contains("cannot change while it runs");
    assertThat(control("PUT", path, "{\"allow_internet_access\":false}").status()).isEqualTo(501);
    assertThat(control("PUT", path, "{\"allowOut\":[\"stand-in.invalid\"]}").status())
        .isEqualTo(400);
    assertThat(control("PUT", path, "{\"surprise\":1}").status()).isEqualTo(400);
    assertThat(control("PUT", path, "{\"egressProxy\":{\"address\":\"p:1\"}}").status())
        .isEqualTo(501);
    assertThat(control("PUT", "/e2b/sandboxes/nosuch/network", "{}").status()).isEqualTo(404);
    assertThat(box.send("PUT", path, "{}", Map.of()).status()).isEqualTo(401);
  }

  @Test
  void pauseResumeAndConnect_freezeAndThawTheSession_asE2bAnswers() {
    Answer made = control("POST", "/e2b/v2/sandboxes", "{\"metadata\":{\"k\":\"paused\"}}");
    String id = made.text("sandboxID");
    String base = "/e2b/sandboxes/" + id;
    String session = "/v1/sessions/e2b-" + id;

    assertThat(control("POST", base + "/pause", "").status()).isEqualTo(204);
    assertThat(control("POST", base + "/pause", "").status()).as("paused already").isEqualTo(409);
    assertThat(box.get(session).text("state")).isEqualTo("paused");
    assertThat(control("GET", base, "").text("state")).isEqualTo("paused");
    Answer paused = control("GET", "/e2b/v2/sandboxes?state=paused&metadata=k%3Dpaused", "");
    assertThat(paused.body().findValuesAsText("sandboxID")).containsExactly(id);
    assertThat(
            control("GET", "/e2b/v2/sandboxes?state=running", "")
                .body()
                .findValuesAsText("sandboxID"))
        .doesNotContain(id);

    Answer resumed = control("POST", base + "/resume", "{\"timeout\":60}");
    assertThat(resumed.status()).isEqualTo(201);
    assertThat(resumed.text("sandboxID")).isEqualTo(id);
    assertThat(box.get(session).text("state")).isEqualTo("running");
    assertThat(control("POST", base + "/resume", "{}").status()).as("running").isEqualTo(409);

    control("POST", base + "/pause", "");
    assertThat(control("POST", base + "/connect", "{\"timeout\":60}").status()).isEqualTo(201);
    assertThat(box.get(session).text("state")).isEqualTo("running");
    assertThat(control("POST", "/e2b/v2/sandboxes/" + id + "/connect", "{}").status())
        .as("connected to a running sandbox")
        .isEqualTo(200);

    assertThat(control("POST", "/e2b/sandboxes/nosuch/pause", "").status()).isEqualTo(404);
    assertThat(control("POST", "/e2b/sandboxes/nosuch/resume", "{}").status()).isEqualTo(404);
    assertThat(control("DELETE", base, "").status()).isEqualTo(204);
  }

  @Test
  void envd_needsTheSandboxesAccessToken() {
    Answer none = envd("GET", "/health", "", Map.of("X-Access-Token", ""));
    assertThat(none.status()).isEqualTo(401);
    assertThat(envd("GET", "/health", "", Map.of("X-Access-Token", "wrong")).status())
        .isEqualTo(401);
    Answer rpc = statRoot(Map.of("X-Access-Token", "wrong"));
    assertThat(rpc.status()).isEqualTo(401);
    assertThat(rpc.body().path("code").asText()).isEqualTo("unauthenticated");
    assertThat(envd("GET", "/health", "", Map.of()).status()).isEqualTo(204);
  }

  @Test
  void rootFiles_needsASignatureOfARunningSandbox() {
    Answer unsigned = box.send("GET", "/files?path=/etc/hostname", "", Map.of());
    assertThat(unsigned.status()).isEqualTo(400);
    assertThat(unsigned.body().path("code").asInt()).isEqualTo(400);
    Answer forged = box.send("GET", "/files?path=/etc/hostname&signature=v1_forged", "", Map.of());
    assertThat(forged.status()).isEqualTo(401);
    assertThat(forged.body().path("message").asText()).contains("signature");
    Answer badExpiry =
        box.send(
            "GET",
            "/files?path=/etc/hostname&signature=v1_x&signature_expiration=soon",
            "",
            Map.of());
    assertThat(badExpiry.status()).isEqualTo(400);
    Answer bearer = box.send("GET", "/files?path=/etc/hostname", "", box.headers());
    assertThat(bearer.status()).isEqualTo(400);
  }

  @Test
  void envd_answers502ForAnUnknownSandbox() {
    Answer health = envd("GET", "/health", "", Map.of("E2b-Sandbox-Id", "nosuchsandbox"));
    assertThat(health.status()).isEqualTo(502);
    Answer rpc = statRoot(Map.of("E2b-Sandbox-Id", "nosuchsandbox"));
    assertThat(rpc.status()).isEqualTo(502);
    assertThat(rpc.body().path("code").asText()).isEqualTo("unavailable");
  }

  @Test
  void envd_routesByTheHostOfPort49983() throws IOException {
    try (Socket socket = new Socket("127.0.0.1", box.server.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(
          ("GET /e2b/envd/health HTTP/1.1\r\nHost: 49983-"
                  + sandboxId
                  + ".box.test\r\nX-Access-Token: "
                  + accessToken
                  + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String status =
          new String(in.readAllBytes(), StandardCharsets.US_ASCII).lines().findFirst().orElse("");
      assertThat(status).isEqualTo("HTTP/1.1 204 No Content");
    }
  }

  @Test
  void rpc_refusesBadInputWithConnectErrors() {
    assertCode(rpc("Stat", "{not json"), 400, "invalid_argument");
    assertCode(rpc("Stat", "[]"), 400, "invalid_argument");
    assertCode(rpc("Stat", "{}"), 400, "invalid_argument");
    assertCode(rpc("Stat", "{\"path\":\"/a\\u0000b\"}"), 400, "invalid_argument");
    assertCode(rpc("ListDir", "{\"path\":\"/\",\"depth\":0}"), 400, "invalid_argument");
    assertCode(rpc("Stat", "{\"path\":\"" + "a".repeat(300_000) + "\"}"), 400, "invalid_argument");
    assertCode(rpc("Remove", "{\"path\":\"/\"}"), 400, "invalid_argument");
    assertCode(
        envd(
            "POST",
            "/filesystem.Filesystem/Stat",
            "x",
            Map.of("Content-Type", "application/proto")),
        400,
        "invalid_argument");
    assertCode(rpc("Nope", "{}"), 501, "unimplemented");
  }

  @Test
  void rpc_answersAnotherCodecWith415_andTheTypesServed() {
    HttpResponse<String> unary =
        post("filesystem.Filesystem/Stat", "application/xml", "<path>/</path>");
    assertThat(unary.statusCode()).isEqualTo(415);
    assertThat(unary.headers().firstValue("Accept-Post"))
        .hasValue("application/json, application/proto");
    HttpResponse<String> stream = post("process.Process/Start", "application/connect+xml", "x");
    assertThat(stream.statusCode()).isEqualTo(415);
    assertThat(stream.headers().firstValue("Accept-Post"))
        .hasValue("application/connect+json, application/connect+proto");
    assertCode(
        envd(
            "POST", "/filesystem.Filesystem/Nope", "", Map.of("Content-Type", "application/proto")),
        501,
        "unimplemented");
  }

  @Test
  void rpc_refusesRoot_forBoxRunsNoSandboxProcessAsRoot() {
    Answer root = statRoot(Map.of("Authorization", "Basic cm9vdDo="));
    assertCode(root, 403, "permission_denied");
    assertThat(root.body().path("message").asText()).contains("user 'root' is not available");
  }

  /** The process service's streaming {@code method} with the message {@code json}, to its end. */
  private static List<JsonNode> stream(String method, String json, Map<String, String> extra) {
    return streamAt("process.Process/" + method, json, extra);
  }

  /** The streaming call {@code service/method} with the message {@code json}, to its end. */
  private static List<JsonNode> streamAt(String call, String json, Map<String, String> extra) {
    BoxHttp.Bytes answer =
        new BoxHttp(box.server.port(), streamHeaders(extra))
            .sendBytes("POST", "/e2b/envd/" + call, envelope(json));
    assertThat(answer.status()).isEqualTo(200);
    return messages(new ByteArrayInputStream(answer.body()), Integer.MAX_VALUE);
  }

  private static Map<String, String> streamHeaders(Map<String, String> extra) {
    Map<String, String> headers = new HashMap<>();
    headers.put("E2b-Sandbox-Id", sandboxId);
    headers.put("X-Access-Token", accessToken);
    headers.put("Content-Type", "application/connect+json");
    headers.putAll(extra);
    return headers;
  }

  private static byte[] envelope(String json) {
    byte[] payload = json.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(5 + payload.length)
        .put((byte) 0)
        .putInt(payload.length)
        .put(payload)
        .array();
  }

  /**
   * Up to {@code count} messages of a stream, each as {@code {"flags":N,"message":{...}}}, up to
   * and with its end-stream message.
   */
  private static List<JsonNode> messages(InputStream in, int count) {
    List<JsonNode> messages = new ArrayList<>();
    try {
      while (messages.size() < count) {
        byte[] header = in.readNBytes(5);
        if (header.length < 5) {
          return messages;
        }
        ByteBuffer fields = ByteBuffer.wrap(header);
        int flags = fields.get();
        byte[] payload = in.readNBytes(fields.getInt());
        ObjectNode message = BoxHttp.JSON.createObjectNode();
        message.put("flags", flags);
        message.set("message", BoxHttp.JSON.readTree(payload));
        messages.add(message);
        if (flags == 2) {
          return messages;
        }
      }
      return messages;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The error code of a stream's end message, or "" when it ended well. */
  private static String endCode(List<JsonNode> messages) {
    JsonNode last = messages.get(messages.size() - 1);
    assertThat(last.path("flags").asInt()).isEqualTo(2);
    return last.path("message").path("error").path("code").asText();
  }

  /** Posts {@code body} as {@code type} to envd's {@code call}, with the sandbox's headers. */
  private static HttpResponse<String> post(String call, String type, String body) {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + box.server.port() + "/e2b/envd/" + call))
            .header("E2b-Sandbox-Id", sandboxId)
            .header("X-Access-Token", accessToken)
            .header("Content-Type", type)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    try {
      return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static Answer process(String method, String body) {
    return envd("POST", "/process.Process/" + method, body, Map.of());
  }

  @Test
  void start_streamsTheOutputAndTheEnd() {
    List<JsonNode> messages =
        stream(
            "Start",
            "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"printf hi; exit 4\"]}}",
            Map.of());
    assertThat(messages.get(0).at("/message/event/start/pid").asInt()).isPositive();
    assertThat(messages.get(1).at("/message/event/data/stdout").asText()).isEqualTo("aGk=");
    JsonNode end = messages.get(messages.size() - 2).at("/message/event/end");
    assertThat(end.path("exitCode").asInt()).isEqualTo(4);
    assertThat(end.path("status").asText()).isEqualTo("exit status 4");
    assertThat(endCode(messages)).isEmpty();
  }

  @Test
  void start_killsTheTreeAtItsDeadline_andEndsWithDeadlineExceeded() {
    List<JsonNode> messages =
        stream(
            "Start",
            "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"sleep 300 & echo $! >"
                + " deadline.pid; wait\"]}}",
            Map.of("Connect-Timeout-Ms", "1000"));
    assertThat(endCode(messages)).isEqualTo("deadline_exceeded");
    JsonNode end = messages.get(messages.size() - 2).at("/message/event/end");
    assertThat(end.path("error").asText()).isEqualTo("context deadline exceeded");
    List<JsonNode> gone =
        stream(
            "Start",
            "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"while kill -0 $(cat"
                + " deadline.pid) 2>/dev/null; do sleep 0.1; done; echo gone\"]}}",
            Map.of());
    assertThat(gone.get(1).at("/message/event/data/stdout").asText()).isEqualTo("Z29uZQo=");
  }

  @Test
  void process_refusesBadInput_andUnknownProcesses() {
    assertCode(process("SendInput", "{not json"), 400, "invalid_argument");
    assertCode(process("SendSignal", "{\"process\":{}}"), 400, "invalid_argument");
    assertCode(
        process("SendSignal", "{\"process\":{\"pid\":424242},\"signal\":\"SIGNAL_SIGKILL\"}"),
        404,
        "not_found");
    assertCode(process("CloseStdin", "{\"process\":{\"tag\":\"nosuch\"}}"), 404, "not_found");
    assertCode(process("Update", "{\"process\":{\"pid\":1}}"), 400, "invalid_argument");
    assertCode(
        process(
            "Update",
            "{\"process\":{\"pid\":424242},\"pty\":{\"size\":{\"cols\":80,\"rows\":24}}}"),
        404,
        "not_found");
    assertCode(
        process(
            "Update", "{\"process\":{\"pid\":424242},\"pty\":{\"size\":{\"cols\":0,\"rows\":24}}}"),
        400,
        "invalid_argument");
    assertThat(process("List", "{}").status()).isEqualTo(200);
    assertThat(endCode(stream("Connect", "{\"process\":{\"pid\":424242}}", Map.of())))
        .isEqualTo("not_found");
    assertThat(endCode(stream("Start", "{not json", Map.of()))).isEqualTo("invalid_argument");
    assertThat(endCode(stream("Start", "{\"process\":{}}", Map.of())))
        .isEqualTo("invalid_argument");
    assertThat(
            endCode(
                stream(
                    "Start",
                    "{\"process\":{\"cmd\":\"/bin/true\"}}",
                    Map.of("Connect-Timeout-Ms", "soon"))))
        .isEqualTo("invalid_argument");
    assertThat(
            endCode(
                stream(
                    "Start",
                    "{\"process\":{\"cmd\":\"/bin/true\"},\"pty\":{\"size\":{}}}",
                    Map.of())))
        .isEqualTo("invalid_argument");
    assertThat(
            endCode(
                stream(
                    "Start",
                    "{\"process\":{\"cmd\":\"/bin/true\"}}",
                    Map.of("Authorization", "Basic cm9vdDo="))))
        .isEqualTo("permission_denied");
  }

  @Test
  void process_streamsNeedTheAccessToken() {
    BoxHttp.Bytes answer =
        new BoxHttp(box.server.port(), streamHeaders(Map.of("X-Access-Token", "")))
            .sendBytes(
                "POST",
                "/e2b/envd/process.Process/Start",
                envelope("{\"process\":{\"cmd\":\"/bin/true\"}}"));
    assertThat(answer.status()).isEqualTo(401);
  }

  @Test
  void streamInput_writesEachMessagesInput_toTheProcess() {
    HttpClient client = HttpClient.newHttpClient();
    try (InputStream in =
        open(client, "{\"process\":{\"cmd\":\"cat\"},\"stdin\":true,\"tag\":\"fed\"}")) {
      String pid = messages(in, 1).get(0).at("/message/event/start/pid").asText();
      String start = "{\"start\":{\"process\":{\"pid\":" + pid + "}}}";
      String data = "{\"data\":{\"input\":{\"stdin\":\"%s\"}}}";
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      body.writeBytes(envelope(start));
      body.writeBytes(envelope(data.formatted("c3RyZWFt"))); // "stream"
      body.writeBytes(envelope("{\"keepalive\":{}}"));
      body.writeBytes(envelope(data.formatted("ZWQK"))); // "ed\n"
      BoxHttp.Bytes answer =
          new BoxHttp(box.server.port(), streamHeaders(Map.of()))
              .sendBytes("POST", "/e2b/envd/process.Process/StreamInput", body.toByteArray());
      assertThat(answer.status()).isEqualTo(200);
      List<JsonNode> answered = messages(new ByteArrayInputStream(answer.body()), 10);
      assertThat(answered).hasSize(2);
      assertThat(endCode(answered)).isEmpty();
      assertThat(process("CloseStdin", "{\"process\":{\"tag\":\"fed\"}}").status()).isEqualTo(200);
      StringBuilder out = new StringBuilder();
      for (JsonNode message : messages(in, Integer.MAX_VALUE)) {
        JsonNode stdout = message.at("/message/event/data/stdout");
        if (stdout.isTextual()) {
          out.append(
              new String(Base64.getDecoder().decode(stdout.asText()), StandardCharsets.UTF_8));
        }
      }
      assertThat(out.toString()).isEqualTo("streamed\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertThat(endCode(stream("StreamInput", "{\"keepalive\":{}}", Map.of())))
        .isEqualTo("invalid_argument");
    assertThat(
            endCode(stream("StreamInput", "{\"start\":{\"process\":{\"pid\":424242}}}", Map.of())))
        .isEqualTo("not_found");
  }

  @Test
  void process_withoutStdin_refusesInput() {
    List<JsonNode> started;
    HttpClient client = HttpClient.newHttpClient();
    try (InputStream in = open(client, "{\"process\":{\"cmd\":\"sleep\",\"args\":[\"300\"]}}")) {
      started = messages(in, 1);
      String pid = started.get(0).at("/message/event/start/pid").asText();
      assertCode(
          process(
              "SendInput", "{\"process\":{\"pid\":" + pid + "},\"input\":{\"stdin\":\"YQ==\"}}"),
          400,
          "failed_precondition");
      assertThat(
              process(
                      "SendSignal",
                      "{\"process\":{\"pid\":" + pid + "},\"signal\":\"SIGNAL_SIGKILL\"}")
                  .status())
          .isEqualTo(200);
      assertThat(endCode(messages(in, Integer.MAX_VALUE))).isEmpty();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void process_capPerSandbox_isResourceExhausted() {
    Answer created = control("POST", "/e2b/v2/sandboxes", "{}");
    String id = created.text("sandboxID");
    String token = created.text("envdAccessToken");
    Map<String, String> headers =
        Map.of(
            "E2b-Sandbox-Id", id,
            "X-Access-Token", token,
            "Content-Type", "application/connect+json");
    HttpClient client = HttpClient.newHttpClient();
    List<InputStream> open = new ArrayList<>();
    try {
      for (int i = 0; i < 64; i++) {
        InputStream in =
            open(client, headers, "{\"process\":{\"cmd\":\"sleep\",\"args\":[\"300\"]}}");
        open.add(in);
        assertThat(messages(in, 1).get(0).at("/message/event/start/pid").asInt()).isEqualTo(i + 1);
      }
      BoxHttp.Bytes refused =
          new BoxHttp(box.server.port(), headers)
              .sendBytes(
                  "POST",
                  "/e2b/envd/process.Process/Start",
                  envelope("{\"process\":{\"cmd\":\"/bin/true\"}}"));
      List<JsonNode> messages = messages(new ByteArrayInputStream(refused.body()), 5);
      assertThat(endCode(messages)).isEqualTo("resource_exhausted");
      assertThat(messages.get(0).at("/message/error/message").asText())
          .contains("the most Box allows");
    } finally {
      assertThat(control("DELETE", "/e2b/sandboxes/" + id, "").status()).isEqualTo(204);
      for (InputStream in : open) {
        assertThat(endCode(messages(in, Integer.MAX_VALUE))).isEmpty();
      }
    }
  }

  private static InputStream open(HttpClient client, String json) {
    return open(client, streamHeaders(Map.of()), json);
  }

  /** Starts a stream and returns its body as it comes. */
  private static InputStream open(HttpClient client, Map<String, String> headers, String json) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(
                URI.create(
                    "http://127.0.0.1:" + box.server.port() + "/e2b/envd/process.Process/Start"))
            .POST(HttpRequest.BodyPublishers.ofByteArray(envelope(json)));
    headers.forEach(request::header);
    try {
      HttpResponse<InputStream> response =
          client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
      assertThat(response.statusCode()).isEqualTo(200);
      return response.body();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Test
  void paths_resolveInsideTheSandbox_neverOnTheHost() throws IOException {
    Path secret = Files.writeString(box.dataDir.resolve("host-secret.txt"), "secret");
    String absolute = secret.toAbsolutePath().toString();
    assertCode(rpc("Stat", "{\"path\":\"" + absolute + "\"}"), 404, "not_found");
    assertCode(rpc("Stat", "{\"path\":\"../../.." + absolute + "\"}"), 404, "not_found");
    Answer read = envd("GET", "/files?path=" + absolute, "", Map.of());
    assertThat(read.status()).isEqualTo(404);
    assertThat(read.body().path("code").asInt()).isEqualTo(404);
  }

  @Test
  void files_refuseAnUploadLargerThanTheFileLimit() {
    try (TestServer small = TestServer.start("max_file_bytes", "1024")) {
      Answer created =
          small.send(
              "POST",
              "/e2b/v2/sandboxes",
              "{}",
              Map.of("X-API-Key", String.valueOf(small.token())));
      Map<String, String> headers =
          Map.of(
              "E2b-Sandbox-Id", created.text("sandboxID"),
              "X-Access-Token", created.text("envdAccessToken"),
              "Content-Type", "application/octet-stream");
      Answer upload =
          small.send("POST", "/e2b/envd/files?path=/home/user/big", "x".repeat(4096), headers);
      assertThat(upload.status()).isEqualTo(413);
      assertThat(upload.body().path("code").asInt()).isEqualTo(413);
    }
  }

  @Test
  void timeout_deletesTheSessionAtTheSandboxesEnd() {
    Answer created = control("POST", "/e2b/v2/sandboxes", "{\"timeout\":1}");
    String session = "e2b-" + created.text("sandboxID");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> !box.get("/v1/sessions").body().findValuesAsText("session_id").contains(session));
    assertThat(control("GET", "/e2b/sandboxes/" + created.text("sandboxID"), "").status())
        .isEqualTo(404);
  }

  @Test
  void watchers_collectEventsUntilRemoved() {
    assertThat(rpc("MakeDir", "{\"path\":\"polled\"}").status()).isEqualTo(200);
    Answer created = rpc("CreateWatcher", "{\"path\":\"/home/user/polled\"}");
    assertThat(created.status()).as(created.body().toString()).isEqualTo(200);
    String watcher = "{\"watcherId\":\"" + created.text("watcherId") + "\"}";
    Map<String, String> octets = Map.of("Content-Type", "application/octet-stream");
    assertThat(envd("POST", "/files?path=/home/user/polled/f", "data", octets).status())
        .isEqualTo(200);
    List<String> events = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              Answer got = rpc("GetWatcherEvents", watcher);
              assertThat(got.status()).isEqualTo(200);
              got.body()
                  .path("events")
                  .forEach(
                      e -> events.add(e.path("type").asText() + " " + e.path("name").asText()));
              return events.contains("EVENT_TYPE_WRITE f");
            });
    assertThat(events).startsWith("EVENT_TYPE_CREATE f", "EVENT_TYPE_WRITE f");
    assertThat(rpc("RemoveWatcher", watcher).status()).isEqualTo(200);
    assertCode(rpc("GetWatcherEvents", watcher), 404, "not_found");
    assertCode(rpc("RemoveWatcher", watcher), 404, "not_found");
  }

  @Test
  void watchers_refuseUnknownIdsMissingDirectoriesAndBadInput() {
    assertCode(rpc("GetWatcherEvents", "{\"watcherId\":\"nosuch\"}"), 404, "not_found");
    assertCode(rpc("RemoveWatcher", "{}"), 400, "invalid_argument");
    assertCode(rpc("CreateWatcher", "{\"path\":\"/no/such/dir\"}"), 404, "not_found");
    Map<String, String> octets = Map.of("Content-Type", "application/octet-stream");
    assertThat(envd("POST", "/files?path=/home/user/plain", "x", octets).status()).isEqualTo(200);
    assertCode(rpc("CreateWatcher", "{\"path\":\"plain\"}"), 400, "invalid_argument");
    assertCode(rpc("CreateWatcher", "{\"path\":\"/\",\"recursive\":1}"), 400, "invalid_argument");
    assertCode(rpc("WatchDir", "{\"path\":\"/\"}"), 400, "invalid_argument");
    List<JsonNode> missing =
        streamAt("filesystem.Filesystem/WatchDir", "{\"path\":\"/no/such/dir\"}", Map.of());
    assertThat(endCode(missing)).isEqualTo("not_found");
  }

  @Test
  void watchers_capPerSandbox_andEndWithTheSandbox() {
    Answer created = control("POST", "/e2b/v2/sandboxes", "{}");
    String id = created.text("sandboxID");
    Map<String, String> headers =
        Map.of(
            "E2b-Sandbox-Id",
            id,
            "X-Access-Token",
            created.text("envdAccessToken"),
            "Content-Type",
            "application/json");
    String body = "{\"path\":\"/home/user\"}";
    String call = "/e2b/envd/filesystem.Filesystem/CreateWatcher";
    for (int i = 0; i < 16; i++) {
      assertThat(box.send("POST", call, body, headers).status()).isEqualTo(200);
    }
    assertCode(box.send("POST", call, body, headers), 429, "resource_exhausted");
    String session = "e2b-" + id;
    assertThat(watchProcesses(headers)).isGreaterThanOrEqualTo(16);
    assertThat(control("DELETE", "/e2b/sandboxes/" + id, "").status()).isEqualTo(204);
    assertThat(box.get("/v1/sessions").body().findValuesAsText("session_id"))
        .doesNotContain(session);
  }

  /**
   * How many processes of directory watches run in the sandbox {@code headers} name, found by their
   * variable, but for the {@code find} and {@code sleep} they run.
   */
  private static int watchProcesses(Map<String, String> headers) {
    String count =
        "n=0; for p in /proc/[0-9]*; do grep -qz '^BOX_INTERVAL=' $p/environ 2>/dev/null &&"
            + " ! grep -qx 'sleep\\\\|find' $p/comm && n=$((n+1)); done; echo $n";
    return Integer.parseInt(
        sh(
                String.valueOf(headers.get("E2b-Sandbox-Id")),
                String.valueOf(headers.get("X-Access-Token")),
                count)
            .strip());
  }

  /**
   * The output of {@code sh -c cmd} in the sandbox {@code id}, started through envd with its access
   * token {@code token}; {@code cmd} is put in JSON as it is.
   */
  private static String sh(String id, String token, String cmd) {
    List<JsonNode> messages =
        stream(
            "Start",
            "{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"" + cmd + "\"]}}",
            Map.of("E2b-Sandbox-Id", id, "X-Access-Token", token));
    StringBuilder out = new StringBuilder();
    for (JsonNode message : messages) {
      String stdout = message.at("/message/event/data/stdout").asText();
      out.append(new String(Base64.getDecoder().decode(stdout), StandardCharsets.UTF_8));
    }
    return out.toString();
  }

  /** Asserts that each of {@code bodies} posted to {@code path} is refused with E2B's 400. */
  private static void assertBadRequests(String path, List<String> bodies) {
    for (String body : bodies) {
      Answer refused = control("POST", path, body);
      assertThat(refused.status()).as(body).isEqualTo(400);
      assertThat(refused.body().path("code").asInt()).isEqualTo(400);
    }
  }

  private static void assertCode(Answer answer, int status, String code) {
    assertThat(answer.status()).as(answer.body().toString()).isEqualTo(status);
    assertThat(answer.body().path("code").asText()).isEqualTo(code);
  }
}
