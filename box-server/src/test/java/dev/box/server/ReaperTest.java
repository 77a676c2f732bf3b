package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.testclient.Answer;
import dev.box.testclient.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Idle reaping, with time advanced by a clock the test controls instead of by sleeping. */
class ReaperTest {
  /** When the tests' clocks start. */
  static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void idleSessionsAreReapedAfterTheTtl_persistentAndBusyOnesAreNot() throws Exception {
    ManualClock clock = new ManualClock(START);
    try (TestServer box = TestServer.start(clock, "session_ttl_sec", "60")) {
      box.exec("idle", "true");
      box.exec("persistent", "true", "\"persistent\":true");
      box.exec("busy", "true");
      CompletableFuture<Answer> busy =
          box.execUntilReleased("busy", "/tmp/go", "\"timeout_sec\":60");

      clock.advance(Duration.ofSeconds(59));
      assertThat(box.server.sessions().reapIdle()).isZero();
      clock.advance(Duration.ofSeconds(2));
      int reaped = box.server.sessions().reapIdle();

      assertThat(reaped).isEqualTo(1);
      assertThat(box.get("/v1/sessions/idle").status()).isEqualTo(404);
      assertThat(box.get("/v1/sessions/persistent").status()).isEqualTo(200);
      assertThat(box.get("/v1/sessions/busy").status()).isEqualTo(200);
      box.exec("busy", "touch /tmp/go");
      assertThat(busy.get().text("status")).isEqualTo("completed");
      clock.advance(Duration.ofSeconds(61));
      assertThat(box.server.sessions().reapIdle()).isEqualTo(1);
      assertThat(box.get("/v1/sessions/busy").status()).isEqualTo(404);
    }
  }

  @Test
  void usingASession_resetsItsIdleTime() {
    ManualClock clock = new ManualClock(START);
    try (TestServer box = TestServer.start(clock, "session_ttl_sec", "60")) {
      box.exec("used", "true");
      clock.advance(Duration.ofSeconds(50));
      box.exec("used", "true");
      clock.advance(Duration.ofSeconds(50));

      assertThat(box.server.sessions().reapIdle()).isZero();
      assertThat(box.get("/v1/sessions/used").text("last_used_at"))
          .isEqualTo("2026-01-01T00:00:50Z");
    }
  }

  @Test
  void closingTheServer_endsItsReaperThread_andItsExecPumps() {
    Set<Thread> before = threadsNamed("box-session-reaper", "box-exec-pump");
    TestServer box = TestServer.start();
    box.exec("pumped", "echo out; echo err >&2");
    List<Thread> started =
        threadsNamed("box-session-reaper", "box-exec-pump").stream()
            .filter(t -> !before.contains(t))
            .toList();
    assertThat(started).extracting(Thread::getName).contains("box-session-reaper");

    box.close();

    await().atMost(Duration.ofSeconds(10)).until(() -> started.stream().noneMatch(Thread::isAlive));
  }

  private static Set<Thread> threadsNamed(String... prefixes) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> java.util.Arrays.stream(prefixes).anyMatch(t.getName()::startsWith))
        .collect(Collectors.toSet());
  }
}
