package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import dev.box.api.BoxSessionNotFoundException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The envelope, error rendering and in-flight limit, with no transport at all. */
class ControlConnectionTest {
  private static final ObjectMapper JSON = BoxJson.newMapper();

  private final List<String> sent = new CopyOnWriteArrayList<>();

  private JsonNode response(int index) throws Exception {
    await().atMost(5, TimeUnit.SECONDS).until(() -> sent.size() > index);
    return JSON.readTree(sent.get(index));
  }

  @Test
  void success_isAnsweredWithTheReferenceEnvelope() throws Exception {
    ControlConnection connection =
        new ControlConnection((a, d, c) -> JSON.createObjectNode().put("echo", a), sent::add, JSON);

    connection.onText("{\"seq_id\": 7, \"action\": \"__ping\", \"data\": {}}");

    JsonNode answer = response(0);
    assertThat(answer.path("seq_id").asInt()).isEqualTo(7);
    assertThat(answer.path("code").asInt()).isZero();
    assertThat(answer.path("message").asText()).isEqualTo("success");
    assertThat(answer.path("data").path("echo").asText()).isEqualTo("__ping");
    assertThat(answer.path("chunk_status").asText()).isEqualTo("end");
  }

  @Test
  void failure_isRenderedWithTheReferenceClassName() throws Exception {
    ControlConnection connection =
        new ControlConnection(
            (a, d, c) -> {
              throw new BoxSessionNotFoundException("session s1 not found");
            },
            sent::add,
            JSON);

    connection.onText("{\"seq_id\": 1, \"action\": \"box_get_session\", \"data\": {}}");

    JsonNode answer = response(0);
    assertThat(answer.path("code").asInt()).isEqualTo(1);
    assertThat(answer.path("message").asText())
        .isEqualTo("BoxSessionNotFoundError: session s1 not found");
    assertThat(answer.path("data").isEmpty()).isTrue();
  }

  @Test
  void longErrors_areTruncatedAsTheReferenceDoes() {
    String rendered = ErrorRendering.render(new ActionError("BoxError", "x".repeat(10_000)));

    assertThat(rendered).hasSize(4096 + ErrorRendering.TRUNCATED_SUFFIX.length());
    assertThat(rendered).endsWith("... [protocol error truncated]");
  }

  @Test
  void malformedJson_isIgnoredAndTheConnectionSurvives() throws Exception {
    ControlConnection connection =
        new ControlConnection((a, d, c) -> JSON.createObjectNode(), sent::add, JSON);

    connection.onText("{not json");
    connection.onText("[1, 2]");
    connection.onText("{\"seq_id\": 2, \"action\": \"__ping\", \"data\": {}}");

    assertThat(response(0).path("seq_id").asInt()).isEqualTo(2);
    assertThat(sent).hasSize(1);
  }

  @Test
  void beyond128InFlight_requestsAreRefusedAsBusy() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    ControlConnection connection =
        new ControlConnection(
            (a, d, c) -> {
              release.await(10, TimeUnit.SECONDS);
              return JSON.createObjectNode();
            },
            sent::add,
            JSON);
    for (int i = 1; i <= ControlConnection.MAX_IN_FLIGHT; i++) {
      connection.onText("{\"seq_id\": " + i + ", \"action\": \"slow\", \"data\": {}}");
    }
    await().until(() -> connection.inFlight() == ControlConnection.MAX_IN_FLIGHT);

    connection.onText("{\"seq_id\": 999, \"action\": \"slow\", \"data\": {}}");

    JsonNode busy = response(0);
    assertThat(busy.path("seq_id").asInt()).isEqualTo(999);
    assertThat(busy.path("message").asText())
        .isEqualTo("RuntimeError: Runtime connection is busy (max 128 concurrent actions)");
    release.countDown();
    await().until(() -> sent.size() == ControlConnection.MAX_IN_FLIGHT + 1);
  }

  @Test
  void aRequestAfterClose_isAnsweredWithAnError_notDropped() throws Exception {
    ControlConnection connection =
        new ControlConnection((a, d, c) -> JSON.createObjectNode(), sent::add, JSON);
    connection.close();

    connection.onText("{\"seq_id\": 3, \"action\": \"__ping\", \"data\": {}}");

    JsonNode answer = response(0);
    assertThat(answer.path("seq_id").asInt()).isEqualTo(3);
    assertThat(answer.path("code").asInt()).isEqualTo(1);
    assertThat(answer.path("message").asText())
        .isEqualTo("BoxRuntimeUnavailableError: the control connection is closed");
    assertThat(answer.path("chunk_status").asText()).isEqualTo("end");
    assertThat(connection.inFlight()).isZero();
  }

  @Test
  void runtimeInitiatedPing_completesWithThePeersResponse() throws Exception {
    ControlConnection connection =
        new ControlConnection((a, d, c) -> JSON.createObjectNode(), sent::add, JSON);

    var answer = connection.call("__ping", JSON.createObjectNode());
    JsonNode request = response(0);
    assertThat(request.path("action").asText()).isEqualTo("__ping");
    connection.onText(
        "{\"seq_id\": "
            + request.path("seq_id").asInt()
            + ", \"code\": 0, \"message\": \"success\", \"data\": {\"ok\": 1},"
            + " \"chunk_status\": \"end\"}");

    assertThat(answer.get(5, TimeUnit.SECONDS).path("ok").asInt()).isEqualTo(1);
  }
}
