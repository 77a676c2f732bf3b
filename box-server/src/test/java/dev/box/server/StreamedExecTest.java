package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * An exec answered as it runs ({@code Accept: application/x-ndjson}), through the real server in
 * real bubblewrap sandboxes. That output arrives as it is written is shown without timing: the
 * command waits for a file that the test makes only once it has read the line before.
 */
class StreamedExecTest {
  private static final int MAX_OUTPUT = 65536;

  @AutoClose
  private static final TestServer box =
      TestServer.start("max_output_bytes", String.valueOf(MAX_OUTPUT));

  private static final HttpClient client = HttpClient.newHttpClient();

  @AfterAll
  static void closeClient() {
    client.close();
  }

  private HttpResponse<Stream<String>> stream(String session, String body)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(
                URI.create(
                    "http://127.0.0.1:" + box.http().port() + "/v1/sessions/" + session + "/exec"))
            .header("Accept", "application/x-ndjson")
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    for (Map.Entry<String, String> header : box.headers().entrySet()) {
      request.header(header.getKey(), header.getValue());
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofLines());
  }

  private static JsonNode json(String line) throws IOException {
    return TestServer.JSON.readTree(line);
  }

  @Test
  void linesArriveAsTheCommandWritesThem_andTheResultComesLast() throws Exception {
    String cmd =
        "echo first; while [ ! -f /tmp/go ]; do sleep 0.05; done; printf 'second' >&2; exit 3";
    HttpResponse<Stream<String>> answer = stream("live", "{\"cmd\": " + quote(cmd) + "}");
    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/x-ndjson");
    Iterator<String> lines = answer.body().iterator();

    JsonNode first = json(lines.next());
    assertThat(first.path("type").asText()).isEqualTo("stdout");
    assertThat(first.path("data").asText()).isEqualTo("first\n");
    // The command still waits: the line came before it could end.
    assertThat(box.exec("live", "touch /tmp/go").status()).isEqualTo(200);

    JsonNode second = json(lines.next());
    assertThat(second.path("type").asText()).isEqualTo("stderr");
    assertThat(second.path("data").asText()).isEqualTo("second");
    JsonNode result = json(lines.next());
    assertThat(result.path("type").asText()).isEqualTo("result");
    assertThat(result.path("status").asText()).isEqualTo("completed");
    assertThat(result.path("exit_code").asInt()).isEqualTo(3);
    assertThat(result.path("session_id").asText()).isEqualTo("live");
    assertThat(result.has("duration_ms")).isTrue();
    assertThat(result.has("stdout")).as("the output came before").isFalse();
    assertThat(lines.hasNext()).as("the result is the last line").isFalse();
  }

  @Test
  void aStreamCarriesAtMostTheOutputLimit_theRestIsCountedInTheResult() throws Exception {
    HttpResponse<Stream<String>> answer =
        stream("limit", "{\"cmd\": \"head -c 100000 /dev/zero | tr '\\\\0' a\"}");
    long streamed = 0;
    JsonNode result = null;
    for (Iterator<String> lines = answer.body().iterator(); lines.hasNext(); ) {
      JsonNode line = json(lines.next());
      if (line.path("type").asText().equals("stdout")) {
        streamed += line.path("data").asText().length();
      } else {
        result = line;
      }
    }
    assertThat(streamed).isEqualTo(MAX_OUTPUT);
    assertThat(result).isNotNull();
    assertThat(java.util.Objects.requireNonNull(result).path("stdout_truncated_bytes").asLong())
        .isEqualTo(100000 - MAX_OUTPUT);
  }

  @Test
  void aCharacterSplitAcrossWrites_arrivesWhole_andWhatIsNotUtf8IsReplaced() throws Exception {
    String cmd = "printf '\\342\\202'; sleep 0.2; printf '\\254 \\377'";
    StringBuilder out = new StringBuilder();
    for (Iterator<String> lines = stream("utf8", "{\"cmd\": " + quote(cmd) + "}").body().iterator();
        lines.hasNext(); ) {
      JsonNode line = json(lines.next());
      if (line.path("type").asText().equals("stdout")) {
        out.append(line.path("data").asText());
      }
    }
    assertThat(out.toString()).isEqualTo("\u20ac \ufffd");
  }

  @Test
  void anErrorBeforeTheCommandStarts_isAnOrdinaryJsonError() throws Exception {
    HttpResponse<Stream<String>> answer = stream("bad", "{\"cmd\": \"true\", \"timeout_sec\": -1}");
    assertThat(answer.statusCode()).isEqualTo(400);
    assertThat(answer.headers().firstValue("Content-Type").orElse(""))
        .startsWith("application/json");
    assertThat(json(String.join("", answer.body().toList())).path("error").path("code").asText())
        .isEqualTo("validation_error");
  }

  @Test
  void aClientThatGoesAway_endsTheCommandAndItsTree() throws Exception {
    // The marker is an argument of a process, where the test finds it (a script is not).
    String cmd = "sh -c 'while true; do echo tick; sleep 0.05; done' tick-by-streamed-exec & wait";
    HttpResponse<Stream<String>> answer = stream("gone", "{\"cmd\": " + quote(cmd) + "}");
    try (Stream<String> lines = answer.body()) {
      assertThat(lines.iterator().next()).contains("tick");
      awaitRunning("gone", "tick-by-streamed-[e]xec", "1");
    }
    awaitRunning("gone", "tick-by-streamed-[e]xec", "0");
  }

  @Test
  void aClientThatGoesAway_endsTheCommand_alsoWhileItWritesNothing() throws Exception {
    String cmd = "echo started; sh -c 'sleep 300; :' silent-by-streamed-exec";
    // Far beyond the wait below: only the client's going can end it in time.
    String body = "{\"cmd\": " + quote(cmd) + ", \"timeout_sec\": 600}";
    try (Socket socket = new Socket("127.0.0.1", box.http().port())) {
      StringBuilder request =
          new StringBuilder("POST /v1/sessions/silent/exec HTTP/1.1\r\n")
              .append("Host: 127.0.0.1\r\nAccept: application/x-ndjson\r\n")
              .append("Content-Type: application/json\r\n");
      box.headers().forEach((name, value) -> request.append(name + ": " + value + "\r\n"));
      request.append("Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n");
      socket.getOutputStream().write((request + "\r\n" + body).getBytes(StandardCharsets.UTF_8));
      BufferedReader answer =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      String line;
      do {
        line = answer.readLine();
      } while (line != null && !line.contains("started"));
      assertThat(line).as("the first line of output").isNotNull();
      awaitRunning("silent", "silent-by-streamed-[e]xec", "1");
    }
    awaitRunning("silent", "silent-by-streamed-[e]xec", "0");
  }

  /**
   * Waits until {@code count} processes of {@code session} have command lines {@code pattern}
   * matches.
   */
  private static void awaitRunning(String session, String pattern, String count) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                box.exec(
                        session,
                        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo;"
                            + " done | grep -c '"
                            + pattern
                            + "' || true")
                    .text("stdout")
                    .strip()
                    .equals(count));
  }

  private static String quote(String text) {
    return dev.box.testclient.BoxHttp.quote(text);
  }
}
