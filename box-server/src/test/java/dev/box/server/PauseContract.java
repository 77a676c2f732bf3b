package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.testclient.Answer;
import dev.box.testclient.BoxHttp;
import dev.box.testclient.BoxSocket;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pausing and resuming a session through the real server, on the backend of {@link #box}: a counter
 * that a process of the session advances in a host directory mounted as its workspace stands still
 * while the session is paused (read from the host, which resumes nothing) and advances again once
 * it is resumed, explicitly or by the next use of the session.
 */
abstract class PauseContract {
  /**
   * Counts in {@code /workspace/counter}, replaced whole each time, and prints each number as a
   * line.
   */
  private static final String COUNTER =
      "i=0; while :; do i=$((i+1)); echo $i > /workspace/.c; mv /workspace/.c /workspace/counter;"
          + " echo line-$i; sleep 0.05; done";

  /** The server the tests run against, started on one backend for the whole class. */
  abstract TestServer box();

  @TempDir Path tmp;

  @Test
  void pause_freezesEveryProcess_untilResumed_andBothAreIdempotent() throws Exception {
    Path dir = hostDir();
    String id = "pause-counter";
    startCounter(id, dir);

    Answer paused = box().post("/v1/sessions/" + id + "/pause", "");
    assertThat(paused.status()).as(paused.body().toString()).isEqualTo(200);
    assertThat(paused.text("state")).isEqualTo("paused");
    assertThat(paused.text("session_id")).isEqualTo(id);
    assertThat(box().post("/v1/sessions/" + id + "/pause", "").text("state")).isEqualTo("paused");
    assertThat(box().get("/v1/sessions/" + id).text("state")).isEqualTo("paused");
    assertThat(stateInList(id)).isEqualTo("paused");
    assertStandsStill(dir);

    Answer resumed = box().post("/v1/sessions/" + id + "/resume", "");
    assertThat(resumed.status()).isEqualTo(200);
    assertThat(resumed.text("state")).isEqualTo("running");
    assertThat(box().post("/v1/sessions/" + id + "/resume", "").text("state")).isEqualTo("running");
    assertThat(stateInList(id)).isEqualTo("running");
    assertAdvances(dir);
    assertThat(box().delete("/v1/sessions/" + id).status()).isEqualTo(200);
  }

  @Test
  void anExecOnAPausedSession_resumesIt_andRuns() throws Exception {
    Path dir = hostDir();
    String spec = hostPath(dir);
    String id = "pause-exec";
    startCounter(id, dir);
    box().post("/v1/sessions/" + id + "/pause", "");
    assertStandsStill(dir);

    Answer exec = box().exec(id, "echo ran", spec);

    assertThat(exec.stdout()).isEqualTo("ran\n");
    assertThat(box().get("/v1/sessions/" + id).text("state")).isEqualTo("running");
    assertAdvances(dir);
    box().delete("/v1/sessions/" + id);
  }

  @Test
  void aManagedProcessRelay_losesNothingAcrossAPause_andAnAttachResumes() throws Exception {
    Path dir = hostDir();
    String id = "pause-relay";
    startCounter(id, dir);
    String ws = "/v1/sessions/" + id + "/managed-process/default/ws";
    int next = 1;
    try (BoxSocket client = WsClient.connect(box(), ws)) {
      next = readLines(client, next, 5);
      box().post("/v1/sessions/" + id + "/pause", "");
      assertStandsStill(dir);
      box().post("/v1/sessions/" + id + "/resume", "");
      next = readLines(client, next, 20);
    }
    box().post("/v1/sessions/" + id + "/pause", "");
    assertStandsStill(dir);

    try (BoxSocket client = WsClient.connect(box(), ws)) {
      assertThat(box().get("/v1/sessions/" + id).text("state"))
          .as("attaching resumed the session")
          .isEqualTo("running");
      readLines(client, next, 20);
    }
    box().delete("/v1/sessions/" + id);
  }

  @Test
  void unknownSessions_areNotFound() {
    assertThat(box().post("/v1/sessions/pause-nobody/pause", "").status()).isEqualTo(404);
    assertThat(box().post("/v1/sessions/pause-nobody/resume", "").status()).isEqualTo(404);
  }

  /** Reads {@code count} lines from {@code first} on, each the next number; returns the next. */
  private static int readLines(BoxSocket client, int first, int count) {
    for (int i = first; i < first + count; i++) {
      assertThat(client.nextText()).isEqualTo("line-" + i);
    }
    return first + count;
  }

  /**
   * Creates the session {@code id} on {@code dir} and starts the counter; returns once it counts.
   */
  private void startCounter(String id, Path dir) throws IOException {
    assertThat(box().post("/v1/sessions/" + id, "{" + hostPath(dir) + "}").status()).isEqualTo(201);
    Answer started =
        box()
            .post(
                "/v1/sessions/" + id + "/managed-process",
                "{\"command\":\"sh\",\"args\":[\"-c\"," + BoxHttp.quote(COUNTER) + "]}");
    assertThat(started.status()).as(started.body().toString()).isEqualTo(201);
    assertAdvances(dir);
  }

  private String stateInList(String id) {
    for (var session : box().get("/v1/sessions").body()) {
      if (session.path("session_id").asText().equals(id)) {
        return session.path("state").asText();
      }
    }
    throw new AssertionError("session " + id + " is not listed");
  }

  /** The counter, read twice a second apart from the host, does not move. */
  static void assertStandsStill(Path dir) throws Exception {
    long before = counter(dir);
    assertThat(before).as("the counter has counted").isPositive();
    Thread.sleep(1000);
    assertThat(counter(dir)).as("the counter while paused").isEqualTo(before);
  }

  /** The counter moves on. */
  static void assertAdvances(Path dir) throws IOException {
    long before = counter(dir);
    await().atMost(Duration.ofSeconds(20)).until(() -> counter(dir) > before);
  }

  private static long counter(Path dir) throws IOException {
    Path file = dir.resolve("counter");
    return Files.exists(file) ? Long.parseLong(Files.readString(file).strip()) : 0;
  }

  /** A directory the sandbox user may write, for the counter. */
  Path hostDir() throws IOException {
    Path dir = Files.createTempDirectory(tmp, "host-");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    return dir;
  }

  /** The spec fields that make {@code dir} the session's /workspace, read-write. */
  static String hostPath(Path dir) {
    return "\"host_path\":" + BoxHttp.quote(dir.toString()) + ",\"host_path_mode\":\"rw\"";
  }
}
