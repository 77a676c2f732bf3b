package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import dev.box.testclient.ManualClock;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * {@link PauseContract} on bubblewrap, frozen through its cgroups; and what does not depend on the
 * backend: the TTLs, a restart, and a refusal where the backend cannot pause.
 */
class PauseTest extends PauseContract {
  @AutoClose private static final TestServer box = TestServer.start();

  @Override
  TestServer box() {
    return box;
  }

  @Test
  void health_declaresPause() {
    assertThat(box.get("/v1/health").body().path("capabilities").toString()).contains("\"pause\"");
  }

  @Test
  void aPausedSession_isNotReapedIdle_butOncePausedLongerThanItsOwnTtl() {
    ManualClock clock = new ManualClock(ReaperTest.START);
    try (TestServer ttl =
        TestServer.start(clock, "session_ttl_sec", "60", "paused_session_ttl_sec", "600")) {
      ttl.exec("paused", "true");
      ttl.exec("idle", "true");
      assertThat(ttl.post("/v1/sessions/paused/pause", "").text("state")).isEqualTo("paused");

      clock.advance(Duration.ofSeconds(61));
      assertThat(ttl.server.sessions().reapIdle()).isOne();
      assertThat(ttl.get("/v1/sessions/idle").status()).isEqualTo(404);
      assertThat(ttl.get("/v1/sessions/paused").text("state")).isEqualTo("paused");

      clock.advance(Duration.ofSeconds(600 - 61 - 1));
      assertThat(ttl.server.sessions().reapIdle()).isZero();
      clock.advance(Duration.ofSeconds(1));
      assertThat(ttl.server.sessions().reapIdle()).isOne();
      assertThat(ttl.get("/v1/sessions/paused").status()).isEqualTo(404);
    }
  }

  @Test
  void aPersistentPausedSession_staysPausedAcrossARestart() throws Exception {
    Path dataDir = tmp.resolve("data");
    String keep = "\"persistent\": true";
    try (TestServer first = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(first.exec("kept", "echo hi > /workspace/note", keep).ok()).isTrue();
      assertThat(first.post("/v1/sessions/kept/pause", "").text("state")).isEqualTo("paused");
    }
    try (TestServer second = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(second.get("/v1/sessions/kept").text("state")).isEqualTo("paused");

      Answer exec = second.exec("kept", "cat /workspace/note", keep);

      assertThat(exec.stdout()).isEqualTo("hi\n");
      assertThat(second.get("/v1/sessions/kept").text("state")).isEqualTo("running");
      second.post("/v1/sessions/kept/pause", "");
    }
    try (TestServer third = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(third.get("/v1/sessions/kept").text("state")).isEqualTo("paused");
      assertThat(third.post("/v1/sessions/kept/resume", "").text("state")).isEqualTo("running");
      assertThat(third.delete("/v1/sessions/kept").status()).isEqualTo(200);
    }
  }

  @Test
  void aBackendThatCannotFreeze_refusesPause_namingItself() {
    try (TestServer noCgroups = TestServer.start("cgroups", "false")) {
      noCgroups.exec("frozen", "true");

      Answer refused = noCgroups.post("/v1/sessions/frozen/pause", "");

      assertThat(refused.status()).isEqualTo(400);
      assertThat(refused.errorMessage()).contains("bwrap");
      assertThat(noCgroups.get("/v1/health").body().path("capabilities").toString())
          .doesNotContain("\"pause\"");
      assertThat(noCgroups.get("/v1/sessions/frozen").text("state")).isEqualTo("running");
    }
  }
}
