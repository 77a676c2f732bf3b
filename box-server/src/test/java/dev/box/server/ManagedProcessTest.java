package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.testclient.Answer;
import dev.box.testclient.BoxSocket;
import dev.box.testclient.BoxSocket.Binary;
import dev.box.testclient.BoxSocket.Close;
import dev.box.testclient.BoxSocket.Frame;
import dev.box.testclient.HostProcesses;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Managed processes and the stdio relay, through the real server and real sandboxes. */
class ManagedProcessTest {
  @AutoClose
  private static final TestServer box = TestServer.start("process_buffer_bytes", "65536");

  private static Answer startProcess(String session, String body) {
    box.post("/v1/sessions/" + session, "{}");
    return box.post("/v1/sessions/" + session + "/managed-process", body);
  }

  private static String ws(String session, String processId) {
    return "/v1/sessions/" + session + "/managed-process/" + processId + "/ws";
  }

  @Test
  void cat_echoesEachTextFrameAsOneLine_withTheMcpSubprotocol() {
    Answer started = startProcess("echo", "{\"process_id\":\"cat\",\"command\":\"cat\"}");
    assertThat(started.status()).isEqualTo(201);
    assertThat(started.text("status")).isEqualTo("running");

    try (BoxSocket client = WsClient.connect(box, ws("echo", "cat"))) {
      assertThat(client.subprotocol()).isEqualTo("mcp");
      client.send("{\"jsonrpc\":\"2.0\",\"id\":1}");
      client.send("second");

      assertThat(client.nextText()).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1}");
      assertThat(client.nextText()).isEqualTo("second");
    }
    assertThat(box.get("/v1/sessions/echo/managed-process/cat").text("status"))
        .as("the process outlives its client")
        .isEqualTo("running");
  }

  @Test
  void legacyRoute_relaysTheDefaultProcess_andEmptyBinaryFrameClosesStdin() {
    startProcess("legacy", "{\"command\":\"cat\"}");

    try (BoxSocket client = WsClient.connect(box, "/v1/sessions/legacy/managed-process/ws")) {
      client.send("once");
      assertThat(client.nextText()).isEqualTo("once");
      client.sendBinary(new byte[0]);

      assertThat(client.nextClose()).isEqualTo(new Close(1000, "exit_code=0"));
    }
    assertThat(box.get("/v1/sessions/legacy/managed-process").text("status")).isEqualTo("exited");
  }

  @Test
  void exit_closesTheSocketWithTheExitCode_afterTheLastLine() {
    startProcess(
        "exit", "{\"command\":\"sh\",\"args\":[\"-c\",\"echo bye; printf tail; exit 3\"]}");

    try (BoxSocket client = WsClient.connect(box, ws("exit", "default"))) {
      assertThat(client.nextText()).isEqualTo("bye");
      assertThat(client.nextText()).isEqualTo("tail");
      assertThat(client.nextClose()).isEqualTo(new Close(1000, "exit_code=3"));
    }
    try (BoxSocket replay = WsClient.connect(box, ws("exit", "default") + "?from=0")) {
      assertThat(replay.nextText())
          .as("an exited process replays what it still has")
          .isEqualTo("bye");
      assertThat(replay.nextText()).isEqualTo("tail");
      assertThat(replay.nextClose()).isEqualTo(new Close(1000, "exit_code=3"));
    }
    Answer info = box.get("/v1/sessions/exit/managed-process/default");
    assertThat(info.text("status")).isEqualTo("exited");
    assertThat(info.body().path("exit_code").asInt()).isEqualTo(3);
  }

  @Test
  void outputWrittenWhileNobodyIsAttached_isDeliveredWhole_evenBeyondTheBuffer() {
    // 20000 numbered lines, about 290 KB: more than four times the 64 KiB buffer.
    startProcess(
        "detached",
        "{\"command\":\"sh\",\"args\":[\"-c\",\"i=1; while [ $i -le 20000 ]; do echo line-$i;"
            + " i=$((i+1)); done\"]}");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                box.get("/v1/sessions/detached/managed-process/default")
                        .body()
                        .path("stdout_offset")
                        .asLong()
                    >= 65536);
    assertThat(box.get("/v1/sessions/detached/managed-process/default").text("status"))
        .as("blocked on its own write, not dropping")
        .isEqualTo("running");

    try (BoxSocket client = WsClient.connect(box, ws("detached", "default"))) {
      for (int i = 1; i <= 20000; i++) {
        assertThat(client.nextText()).isEqualTo("line-" + i);
      }
      assertThat(client.nextClose().reason()).isEqualTo("exit_code=0");
    }
  }

  @Test
  void reconnecting_continuesWhereDeliveryEnded_andRawModeResumesFromAnOffset() {
    startProcess("resume", "{\"command\":\"cat\"}");
    try (BoxSocket first = WsClient.connect(box, ws("resume", "default"))) {
      first.send("one");
      assertThat(first.nextText()).isEqualTo("one");
    }
    try (BoxSocket second = WsClient.connect(box, ws("resume", "default"))) {
      second.send("two");
      assertThat(second.nextText()).as("nothing delivered twice").isEqualTo("two");
    }
    try (BoxSocket raw = WsClient.connect(box, ws("resume", "default") + "?mode=raw&from=0")) {
      assertThat(raw.nextText()).isEqualTo("{\"type\":\"start\",\"offset\":0}");
      assertThat(new String(binaryUntil(raw, 8), StandardCharsets.UTF_8)).isEqualTo("one\ntwo\n");
    }
    try (BoxSocket raw = WsClient.connect(box, ws("resume", "default") + "?mode=raw&from=4")) {
      assertThat(raw.nextText()).isEqualTo("{\"type\":\"start\",\"offset\":4}");
      assertThat(new String(binaryUntil(raw, 4), StandardCharsets.UTF_8)).isEqualTo("two\n");
    }
  }

  @Test
  void resumingFromAnOffsetNoLongerBuffered_saysSoWithTheFirstAvailableOne() {
    startProcess(
        "gone",
        "{\"command\":\"sh\",\"args\":[\"-c\",\"head -c 200000 /dev/zero | tr '\\\\0' x;"
            + " echo; cat\"]}");
    try (BoxSocket client = WsClient.connect(box, ws("gone", "default") + "?mode=raw")) {
      client.nextText();
      binaryUntil(client, 200001);
    }

    try (BoxSocket client = WsClient.connect(box, ws("gone", "default") + "?from=0")) {
      Close close = client.nextClose();

      assertThat(close.code()).isEqualTo(4410);
      assertThat(close.reason()).startsWith("offset gone; first_available=");
      long first =
          Long.parseLong(close.reason().substring("offset gone; first_available=".length()));
      assertThat(first).isGreaterThan(0).isLessThanOrEqualTo(200001);
    }
  }

  @Test
  void stop_killsTheWholeTree_includingADaemonisedGrandchild() throws Exception {
    String marker = "box-daemon-" + UUID.randomUUID();
    startProcess(
        "tree",
        "{\"command\":\"sh\",\"args\":[\"-c\",\"(setsid sh -c 'sleep 1000; echo "
            + marker
            + "' &); trap '' TERM; exec sleep 1001\"]}");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> !HostProcesses.commandLinesContaining(marker).isEmpty());

    Answer stopped = box.delete("/v1/sessions/tree/managed-process/default");

    assertThat(stopped.body().path("stopped").asText()).isEqualTo("default");
    assertThat(HostProcesses.commandLinesContaining(marker)).isEmpty();
    assertThat(box.exec("tree", "ps -eo args").text("stdout")).doesNotContain("sleep 100");
    assertThat(box.get("/v1/sessions/tree/managed-process/default").errorCode())
        .isEqualTo("managed_process_not_found");
  }

  @Test
  void startingARunningId_replacesTheOldProcess() throws Exception {
    String marker = "box-old-" + UUID.randomUUID();
    startProcess(
        "replace", "{\"command\":\"sh\",\"args\":[\"-c\",\"sleep 1000; echo " + marker + "\"]}");

    Answer second = box.post("/v1/sessions/replace/managed-process", "{\"command\":\"cat\"}");

    assertThat(second.text("command")).isEqualTo("cat");
    assertThat(HostProcesses.commandLinesContaining(marker)).isEmpty();
    assertThat(box.get("/v1/sessions/replace").body().path("managed_processes").size())
        .isEqualTo(1);
  }

  @Test
  void deletingTheSession_killsItsProcesses() throws Exception {
    String marker = "box-session-" + UUID.randomUUID();
    startProcess(
        "doomed", "{\"command\":\"sh\",\"args\":[\"-c\",\"sleep 1000; echo " + marker + "\"]}");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> !HostProcesses.commandLinesContaining(marker).isEmpty());

    box.delete("/v1/sessions/doomed");

    assertThat(HostProcesses.commandLinesContaining(marker)).isEmpty();
  }

  @Test
  void aSecondClient_waitsUntilTheFirstDetaches() {
    startProcess("single", "{\"command\":\"cat\"}");
    try (BoxSocket first = WsClient.connect(box, ws("single", "default"))) {
      BoxSocket second = WsClient.connect(box, ws("single", "default"));
      second.send("from-second");
      first.send("from-first");
      assertThat(first.nextText()).isEqualTo("from-first");
      assertThat(
              box.get("/v1/sessions/single/managed-process/default")
                  .body()
                  .path("attached")
                  .asBoolean())
          .isTrue();
      first.close();

      assertThat(second.nextText()).isEqualTo("from-second");
      second.close();
    }
  }

  @Test
  void envValuesAreNeverEchoed_andInvalidUtf8BecomesTheReplacementCharacter() {
    Answer started =
        startProcess(
            "utf8",
            "{\"command\":\"sh\",\"args\":[\"-c\",\"printf '\\\\377ok\\\\n'; echo \\\"$TOKEN\\\" >&2; cat\"],"
                + "\"env\":{\"TOKEN\":\"s3cret\",\"A\":\"1\"}}");
    assertThat(started.body().path("env_keys").toString()).isEqualTo("[\"A\",\"TOKEN\"]");
    // The process's own stderr may be in the preview already: only that may show the value.
    ObjectNode answer = (ObjectNode) started.body().deepCopy();
    answer.remove("stderr_preview");
    assertThat(answer.toString()).doesNotContain("s3cret");

    try (BoxSocket client = WsClient.connect(box, ws("utf8", "default"))) {
      assertThat(client.nextText()).isEqualTo("\uFFFDok");
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                box.get("/v1/sessions/utf8/managed-process/default")
                    .text("stderr_preview")
                    .equals("s3cret\n"));
  }

  @Test
  void aLineLongerThanTheBuffer_failsTheRelayLoudly() {
    startProcess(
        "long",
        "{\"command\":\"sh\",\"args\":[\"-c\",\"head -c 100000 /dev/zero | tr '\\\\0' x; cat\"]}");

    try (BoxSocket client = WsClient.connect(box, ws("long", "default"))) {
      Close close = client.nextClose();

      assertThat(close.code()).isEqualTo(1009);
      assertThat(close.reason()).contains("longer than the 65536-byte buffer");
    }
  }

  @Test
  void refusalsBeforeTheUpgrade_areJsonErrors() {
    startProcess("refused", "{\"command\":\"true\"}");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> box.get("/v1/sessions/refused/managed-process").text("status").equals("exited"));

    Answer missing = WsClient.refusal(box, ws("refused", "nope"));
    Answer exited = WsClient.refusal(box, ws("refused", "default"));
    Answer badMode = WsClient.refusal(box, ws("refused", "default") + "?mode=fast");
    Answer noSession = box.post("/v1/sessions/none/managed-process", "{\"command\":\"cat\"}");
    Answer noCommand = box.post("/v1/sessions/refused/managed-process", "{\"command\":\" \"}");

    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.errorCode()).isEqualTo("managed_process_not_found");
    assertThat(exited.status()).isEqualTo(409);
    assertThat(exited.errorMessage())
        .isEqualTo("managed process default in session refused is not running");
    assertThat(badMode.status()).isEqualTo(400);

    assertThat(noSession.errorCode()).isEqualTo("session_not_found");
    assertThat(noCommand.errorMessage()).isEqualTo("command must not be empty");
  }

  private static byte[] binaryUntil(BoxSocket client, int bytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while (out.size() < bytes) {
      Frame frame = client.next();
      if (frame instanceof Binary b) {
        out.writeBytes(b.bytes());
      } else {
        throw new AssertionError("expected binary frames, got " + frame);
      }
    }
    return out.toByteArray();
  }
}
