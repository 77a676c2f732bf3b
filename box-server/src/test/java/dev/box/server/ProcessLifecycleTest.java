package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.testclient.Answer;
import dev.box.testclient.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Capacity, retention of exited records and reaping, with time the test controls. */
class ProcessLifecycleTest {

  @Test
  void aSessionWithARunningProcess_isNeverReaped_andIsOnceItStops() {
    ManualClock clock = new ManualClock(ReaperTest.START);
    try (TestServer box = TestServer.start(clock, "session_ttl_sec", "60")) {
      box.post("/v1/sessions/kept", "{}");
      box.post("/v1/sessions/kept/managed-process", "{\"command\":\"cat\"}");
      assertThat(box.get("/v1/status").body().path("managed_processes").asInt()).isEqualTo(1);

      clock.advance(Duration.ofSeconds(600));
      assertThat(box.server.sessions().reapIdle()).isZero();

      box.delete("/v1/sessions/kept/managed-process/default");
      clock.advance(Duration.ofSeconds(61));
      assertThat(box.server.sessions().reapIdle()).isEqualTo(1);
      assertThat(box.get("/v1/status").body().path("managed_processes").asInt()).isZero();
    }
  }

  @Test
  void exitedRecords_areKeptForTheRetentionThenForgotten() {
    ManualClock clock = new ManualClock(ReaperTest.START);
    try (TestServer box =
        TestServer.start(clock, "completed_process_retention_sec", "300", "session_ttl_sec", "0")) {
      box.post("/v1/sessions/s", "{}");
      box.post(
          "/v1/sessions/s/managed-process", "{\"command\":\"sh\",\"args\":[\"-c\",\"exit 4\"]}");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> box.get("/v1/sessions/s/managed-process").text("status").equals("exited"));

      clock.advance(Duration.ofSeconds(299));
      box.server.sessions().processes().reapCompleted();
      assertThat(box.get("/v1/sessions/s/managed-process").body().path("exit_code").asInt())
          .isEqualTo(4);

      clock.advance(Duration.ofSeconds(2));
      box.server.sessions().processes().reapCompleted();
      assertThat(box.get("/v1/sessions/s/managed-process").errorCode())
          .isEqualTo("managed_process_not_found");
    }
  }

  @Test
  void exitedRecordsBeyondTheMaximum_evictTheOldestFirst() {
    try (TestServer box = TestServer.start("max_completed_processes", "2")) {
      box.post("/v1/sessions/s", "{}");
      for (String id : new String[] {"a", "b", "c"}) {
        box.post(
            "/v1/sessions/s/managed-process",
            "{\"process_id\":\"" + id + "\",\"command\":\"true\"}");
        await()
            .atMost(Duration.ofSeconds(10))
            .until(
                () ->
                    box.get("/v1/sessions/s/managed-process/" + id)
                        .text("status")
                        .equals("exited"));
      }

      assertThat(box.get("/v1/sessions/s/managed-process/a").status()).isEqualTo(404);
      assertThat(box.get("/v1/sessions/s/managed-process/b").status()).isEqualTo(200);
      assertThat(box.get("/v1/sessions/s/managed-process/c").status()).isEqualTo(200);
    }
  }

  @Test
  void aSlowDeleteOfOneSession_neverBlocksAnother() throws Exception {
    try (TestServer box = TestServer.start()) {
      box.post("/v1/sessions/slow", "{}");
      // A process that ignores SIGTERM makes the delete wait out the 5 s grace before SIGKILL.
      box.post(
          "/v1/sessions/slow/managed-process",
          "{\"command\":\"sh\",\"args\":[\"-c\",\"trap '' TERM; touch /tmp/ready; exec sleep 1000\"]}");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> box.exec("slow", "test -f /tmp/ready").body().path("ok").asBoolean());
      java.util.concurrent.CompletableFuture<Answer> slowDelete =
          java.util.concurrent.CompletableFuture.supplyAsync(() -> box.delete("/v1/sessions/slow"));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> box.get("/v1/sessions/slow").status() == 404);

      Answer other = box.exec("other", "echo fine");

      assertThat(other.text("stdout")).isEqualTo("fine\n");
      assertThat(slowDelete).as("the other session did not wait for the delete").isNotDone();
      assertThat(slowDelete.get().status()).isEqualTo(200);
    }
  }

  @Test
  void startingBeyondMaxManagedProcesses_isCapacityExceeded() {
    try (TestServer box = TestServer.start("max_managed_processes", "1")) {
      box.post("/v1/sessions/s", "{}");
      box.post("/v1/sessions/s/managed-process", "{\"process_id\":\"one\",\"command\":\"cat\"}");

      Answer second =
          box.post(
              "/v1/sessions/s/managed-process", "{\"process_id\":\"two\",\"command\":\"cat\"}");
      Answer replacing =
          box.post(
              "/v1/sessions/s/managed-process", "{\"process_id\":\"one\",\"command\":\"cat\"}");

      assertThat(second.status()).isEqualTo(429);
      assertThat(second.errorMessage()).isEqualTo("Box managed process capacity reached (1)");
      assertThat(replacing.status()).as("replacing does not count twice").isEqualTo(201);
    }
  }
}
