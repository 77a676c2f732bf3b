package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ForkContract} on bubblewrap; and what does not depend on the backend: every refusal, a
 * paused source, the bounds, snapshots across a restart, and how health reports the store.
 */
class ForkTest extends ForkContract {
  @AutoClose private static final TestServer box = TestServer.start();

  @Override
  TestServer box() {
    return box;
  }

  @Test
  void health_saysHowForksAreMade() {
    assertThat(box.get("/v1/health").body().path("enforced").path("fork").asText())
        .startsWith("copy-on-write (btrfs");
    assertThat(box.get("/v1/health").body().path("enforced").path("fork_root").asText())
        .startsWith("none: the bwrap backend keeps no copy of a sandbox's root");
  }

  /** Box checkpoints no process, and says why this host could not either. */
  @Test
  void health_reportsMemoryStateAbsent_withWhy() {
    assertThat(box.get("/v1/health").body().path("enforced").path("memory_state").asText())
        .startsWith("absent: processes are not checkpointed");
  }

  @Test
  void aPausedSource_isForked_andStaysPaused() {
    box.exec("paused-src", "echo frozen > /workspace/a");
    box.post("/v1/sessions/paused-src/pause", "");

    Answer fork = box.post("/v1/sessions/paused-src/fork", "{\"session_id\": \"paused-dst\"}");

    assertThat(fork.status()).as(fork.body().toString()).isEqualTo(201);
    assertThat(fork.text("state")).isEqualTo("running");
    assertThat(box.get("/v1/sessions/paused-src").text("state")).isEqualTo("paused");
    assertThat(box.exec("paused-dst", "cat /workspace/a").stdout()).isEqualTo("frozen\n");
    box.delete("/v1/sessions/paused-src");
    box.delete("/v1/sessions/paused-dst");
  }

  @Test
  void fork_refusesWhatCannotBe() {
    box.exec("refusing", "true");
    box.exec("taken", "true");

    assertError(box.post("/v1/sessions/nowhere/fork", "{\"session_id\": \"n\"}"), 404);
    assertError(box.post("/v1/sessions/refusing/fork", "{\"session_id\": \"taken\"}"), 409);
    assertError(box.post("/v1/sessions/refusing/fork", "{\"session_id\": \"refusing\"}"), 400);
    assertError(box.post("/v1/sessions/refusing/fork", "{\"session_id\": \" \"}"), 400);
    assertError(box.post("/v1/sessions/refusing/fork", "{\"session_id\": \"a\\u0000b\"}"), 400);
    assertError(box.post("/v1/sessions/refusing/fork", "{}"), 400);
    assertError(box.post("/v1/sessions/refusing/fork", ""), 400);
    assertError(box.post("/v1/sessions/refusing/fork", "[1]"), 400);
    assertThat(box.exec("taken", "ls /workspace").stdout()).isEmpty();
    box.delete("/v1/sessions/refusing");
    box.delete("/v1/sessions/taken");
  }

  @Test
  void fork_isBoundByMaxSessions_asACreate() {
    try (TestServer one = TestServer.start("max_sessions", "1")) {
      one.exec("only", "true");

      Answer fork = one.post("/v1/sessions/only/fork", "{\"session_id\": \"second\"}");

      assertError(fork, 429);
      assertThat(one.get("/v1/sessions/second").status()).isEqualTo(404);
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "../x",
        "a/b",
        "",
        ".x",
        "x y",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      })
  void aSnapshotName_thatIsNoName_isRefused(String name) {
    box.exec("named", "true");

    Answer taken = box.post("/v1/sessions/named/snapshots", "{\"name\": \"" + name + "\"}");

    assertError(taken, 400);
    assertThat(taken.errorMessage()).startsWith("name must be 1 to 64 letters");
    Answer created = box.exec("from-bad", "true", "\"from_snapshot\": \"" + name + "\"");
    if (!name.isEmpty()) {
      assertError(created, 400);
    }
    box.delete("/v1/sessions/named");
    box.delete("/v1/sessions/from-bad");
  }

  @Test
  void snapshots_refuseUnknownNamesAndSessions_andTakeANameOnce() {
    box.exec("once", "true");

    assertError(box.post("/v1/sessions/nowhere/snapshots", "{\"name\": \"n\"}"), 404);
    assertThat(box.post("/v1/sessions/once/snapshots", "{\"name\": \"once\"}").status())
        .isEqualTo(201);
    assertError(box.post("/v1/sessions/once/snapshots", "{\"name\": \"once\"}"), 409);
    assertError(box.get("/v1/snapshots/nope"), 404);
    assertError(box.get("/v1/snapshots/.x"), 400);
    assertError(box.delete("/v1/snapshots/nope"), 404);
    assertError(box.exec("from-nope", "true", "\"from_snapshot\": \"nope\""), 404);
    assertThat(box.get("/v1/sessions/from-nope").status()).isEqualTo(404);
    assertThat(box.delete("/v1/snapshots/once").status()).isEqualTo(204);
    box.delete("/v1/sessions/once");
  }

  @Test
  void snapshots_areBoundedByMaxSnapshots() {
    try (TestServer one = TestServer.start("max_snapshots", "1")) {
      one.exec("bounded", "true");
      assertThat(one.post("/v1/sessions/bounded/snapshots", "{\"name\": \"a\"}").status())
          .isEqualTo(201);

      Answer second = one.post("/v1/sessions/bounded/snapshots", "{\"name\": \"b\"}");

      assertError(second, 429);
      assertThat(second.errorMessage()).contains("max_snapshots 1");
    }
  }

  @Test
  void aSnapshot_survivesARestart_untilDeleted() throws Exception {
    Path dataDir = tmp.resolve("data");
    try (TestServer first = TestServer.startOn(dataDir, Clock.systemUTC())) {
      first.exec("source", "echo old > /workspace/file");
      assertThat(first.post("/v1/sessions/source/snapshots", "{\"name\": \"base\"}").status())
          .isEqualTo(201);
      first.exec("source", "echo new > /workspace/file");
      assertThat(first.exec("restored", "cat /workspace/file", from("base")).stdout())
          .isEqualTo("old\n");
    }
    try (TestServer second = TestServer.startOn(dataDir, Clock.systemUTC())) {
      Answer list = second.get("/v1/snapshots");
      assertThat(list.body().path("snapshots").size()).isOne();
      assertThat(list.body().path("snapshots").get(0).path("name").asText()).isEqualTo("base");
      assertThat(second.get("/v1/snapshots/base").text("session_id")).isEqualTo("source");

      assertThat(second.exec("again", "cat /workspace/file", from("base")).stdout())
          .isEqualTo("old\n");

      assertThat(second.delete("/v1/snapshots/base").status()).isEqualTo(204);
      assertError(second.exec("too-late", "true", from("base")), 404);
      assertThat(second.get("/v1/snapshots").body().path("snapshots").size()).isZero();
    }
  }

  private static String from(String snapshot) {
    return "\"from_snapshot\": \"" + snapshot + "\"";
  }

  private static void assertError(Answer answer, int status) {
    assertThat(answer.status()).as(answer.body().toString()).isEqualTo(status);
    assertThat(answer.errorCode()).isNotEmpty();
  }
}
