package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxSocket;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /metrics} of a real server after real execs, sessions, managed processes and relayed
 * bytes in real bubblewrap sandboxes: the scrape is parsed as Prometheus would parse it, and each
 * counter must have moved by exactly what the test did.
 */
class MetricsTest {
  @AutoClose private static final TestServer box = TestServer.start("max_output_bytes", "1024");

  private static final String BWRAP = "bwrap";

  @AfterEach
  void deleteEverySession() {
    for (JsonNode session : box.get("/v1/sessions").body()) {
      box.delete("/v1/sessions/" + session.path("session_id").asText());
    }
  }

  private static HttpResponse<String> get(TestServer server, Map<String, String> headers) {
    return get(server.server.port(), headers);
  }

  private static HttpResponse<String> get(int port, Map<String, String> headers) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
            .timeout(Duration.ofSeconds(30));
    headers.forEach(request::header);
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static PrometheusText scrape() {
    HttpResponse<String> answer = get(box, box.headers());
    assertThat(answer.statusCode()).isEqualTo(200);
    return PrometheusText.parse(answer.body());
  }

  private static double moved(
      PrometheusText before, PrometheusText after, String name, String... labels) {
    return after.value(name, labels) - before.value(name, labels);
  }

  @Test
  void execs_areCountedByBackendAndOutcome_timed_andTheirTimeoutsAndCutOutputCounted() {
    PrometheusText before = scrape();

    assertThat(box.exec("m1", "true").ok()).isTrue();
    assertThat(box.exec("m1", "exit 3").body().path("exit_code").asInt()).isEqualTo(3);
    assertThat(box.exec("m1", "sleep 30", "\"timeout_sec\":1").text("status"))
        .isEqualTo("timed_out");
    assertThat(
            box.exec("m1", "yes x | head -c 5000").body().path("stdout_truncated_bytes").asLong())
        .isPositive();
    assertThat(box.exec("m1", "true", "\"network\":\"on\"").status())
        .as("a conflicting spec: no result")
        .isEqualTo(409);
    PrometheusText after = scrape();

    String exec = "box_exec_total";
    assertThat(moved(before, after, exec, "backend", BWRAP, "outcome", "ok")).isEqualTo(2);
    assertThat(moved(before, after, exec, "backend", BWRAP, "outcome", "nonzero")).isEqualTo(1);
    assertThat(moved(before, after, exec, "backend", BWRAP, "outcome", "timeout")).isEqualTo(1);
    assertThat(moved(before, after, exec, "backend", BWRAP, "outcome", "error")).isEqualTo(1);
    String duration = "box_exec_duration_seconds";
    assertThat(moved(before, after, duration + "_count", "backend", BWRAP))
        .as("execs with a result")
        .isEqualTo(4);
    assertThat(moved(before, after, duration + "_bucket", "backend", BWRAP, "le", "+Inf"))
        .isEqualTo(4);
    assertThat(moved(before, after, duration + "_sum", "backend", BWRAP))
        .as("the timed-out exec alone lasted its 1 s timeout")
        .isGreaterThanOrEqualTo(1.0);
    assertThat(moved(before, after, "box_exec_timeouts_total", "backend", BWRAP)).isEqualTo(1);
    String cut = "box_exec_output_truncated_total";
    assertThat(moved(before, after, cut, "backend", BWRAP, "stream", "stdout")).isEqualTo(1);
    assertThat(moved(before, after, cut, "backend", BWRAP, "stream", "stderr")).isZero();
    assertThat(after.samples())
        .as("no label carries a session id or a command")
        .allSatisfy(
            s -> assertThat(s.labels().values()).doesNotContain("m1", "exit 3", "sleep 30"));
  }

  @Test
  void sessionsAndManagedProcesses_areGaugedUntilDeleted_startsTimed_andRelayedBytesCounted() {
    PrometheusText before = scrape();
    assertThat(before.value("box_sessions_active")).isZero();
    assertThat(before.value("box_backend_available", "backend", BWRAP)).isEqualTo(1);
    assertThat(before.value("box_pool_size", "backend", BWRAP)).isEqualTo(2);

    assertThat(box.post("/v1/sessions/g1", "{}").status()).isEqualTo(201);
    assertThat(box.post("/v1/sessions/g2", "{}").status()).isEqualTo(201);
    assertThat(box.post("/v1/sessions/g1", "{}").status()).as("reused").isEqualTo(200);
    assertThat(box.post("/v1/sessions/g1/managed-process", "{\"command\":\"cat\"}").status())
        .isEqualTo(201);
    try (BoxSocket client = WsClient.connect(box, "/v1/sessions/g1/managed-process/default/ws")) {
      client.send("hello");
      assertThat(client.nextText()).isEqualTo("hello");

      PrometheusText during = scrape();
      assertThat(during.value("box_sessions_active")).isEqualTo(2);
      assertThat(during.value("box_managed_processes_active")).isEqualTo(1);
      assertThat(
              moved(before, during, "box_session_create_duration_seconds_count", "backend", BWRAP))
          .as("two starts, pre-started or not; the reuse is no start")
          .isEqualTo(2);
      // The relay counts each side after its write, on its own thread: the echo may arrive first.
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                PrometheusText now = scrape();
                assertThat(moved(before, now, "box_relay_bytes_total", "direction", "stdin"))
                    .as("hello and its newline")
                    .isEqualTo(6);
                assertThat(moved(before, now, "box_relay_bytes_total", "direction", "stdout"))
                    .isEqualTo(6);
              });
    }
    assertThat(box.delete("/v1/sessions/g1").status()).isEqualTo(200);
    assertThat(box.delete("/v1/sessions/g2").status()).isEqualTo(200);

    PrometheusText after = scrape();
    assertThat(after.value("box_sessions_active")).isZero();
    assertThat(after.value("box_managed_processes_active")).isZero();
  }

  @Test
  void execsThroughLangBotsControlChannel_countAsThoseOfTheRestApi() throws IOException {
    Map<String, String> langbotToken = Map.of("X-LangBot-Box-Control-Token", LangBotServers.TOKEN);
    String ctx = LangBotServers.context("ws-metrics", 1);
    try (BoxServer server =
            LangBotServers.start(Map.of("backend", BWRAP), LangBotServers.ENV, false);
        RpcClient rpc = RpcClient.asLangBot(server.port())) {
      PrometheusText before = PrometheusText.parse(get(server.port(), langbotToken).body());

      JsonNode ok =
          RpcClient.data(rpc.call("box_exec", "{\"session_id\": \"lb\", \"cmd\": \"true\"}", ctx));
      JsonNode failed =
          RpcClient.data(
              rpc.call("box_exec", "{\"session_id\": \"lb\", \"cmd\": \"exit 1\"}", ctx));
      PrometheusText after = PrometheusText.parse(get(server.port(), langbotToken).body());

      assertThat(ok.path("exit_code").asInt()).isZero();
      assertThat(failed.path("exit_code").asInt()).isEqualTo(1);
      String exec = "box_exec_total";
      assertThat(moved(before, after, exec, "backend", BWRAP, "outcome", "ok")).isEqualTo(1);
      assertThat(moved(before, after, exec, "backend", BWRAP, "outcome", "nonzero")).isEqualTo(1);
      assertThat(after.value("box_sessions_active")).isEqualTo(1);
    }
  }

  @Test
  void aScraperAskingForOpenMetrics_getsOpenMetrics() {
    HttpResponse<String> answer =
        get(box, with(box.headers(), "Accept", "application/openmetrics-text; version=1.0.0"));

    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/openmetrics-text");
    assertThat(answer.body()).contains("box_exec_total{").endsWith("# EOF\n");
  }

  @Test
  void thePrometheusTextFormat_isTheDefault() {
    HttpResponse<String> answer = get(box, box.headers());

    assertThat(answer.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("text/plain; version=0.0.4");
    assertThat(answer.body()).contains("# TYPE box_exec_duration_seconds histogram");
  }

  @Test
  void withoutTheToken_metricsAreRefusedWithAJsonError() {
    Answer refused = box.send("GET", "/metrics", "", Map.of());

    assertThat(refused.status()).isEqualTo(401);
    assertThat(refused.errorCode()).isEqualTo("unauthorized");
  }

  @Test
  void metricsOpen_servesMetricsWithoutTheToken_andNothingElse() {
    try (TestServer open = TestServer.start("metrics_open", "true")) {
      HttpResponse<String> answer = get(open, Map.of());

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(PrometheusText.parse(answer.body()).value("box_sessions_active")).isZero();
      assertThat(open.send("GET", "/v1/sessions", "", Map.of()).status()).isEqualTo(401);
      assertThat(open.send("GET", "/metrics/", "", Map.of()).status()).isEqualTo(401);
    }
  }

  @Test
  void metricsOff_hasNoMetricsRoute() {
    try (TestServer off = TestServer.start("metrics", "false")) {
      Answer answer = off.get("/metrics");

      assertThat(answer.status()).isEqualTo(404);
      assertThat(answer.errorCode()).isEqualTo("not_found");
      assertThat(off.exec("x", "true").ok()).as("execs run as before").isTrue();
    }
  }

  private static Map<String, String> with(Map<String, String> headers, String name, String value) {
    Map<String, String> all = new HashMap<>(headers);
    all.put(name, value);
    return all;
  }
}
