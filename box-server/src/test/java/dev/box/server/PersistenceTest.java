package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import dev.box.testclient.PrivateWorkspaces;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Persistent sessions outlive the server: after a restart on the same data dir they are listed with
 * their spec and creation time, their files are there, and the next exec runs in them; every other
 * session, its workspace included, is gone.
 */
class PersistenceTest {
  /** What the execs in the persistent session say of it, so that they reuse it. */
  private static final String KEEP = "\"persistent\": true, \"memory_mb\": 256";

  @TempDir Path dataDir;

  @Test
  void aPersistentSession_survivesARestart_withItsFilesSpecAndIdentity() throws Exception {
    String createdAt;
    try (TestServer first = TestServer.startOn(dataDir, Clock.systemUTC())) {
      Answer created =
          first.post("/v1/sessions/keep", "{\"persistent\": true, \"memory_mb\": 256}");
      assertThat(created.status()).isEqualTo(201);
      createdAt = created.text("created_at");
      assertThat(
              first.exec("keep", "echo kept > /workspace/note; echo bg-$$ > /tmp/pid", KEEP).ok())
          .isTrue();
      assertThat(first.exec("temp", "echo gone > /workspace/note").ok()).isTrue();
    }
    assertThat(PrivateWorkspaces.names(dataDir)).hasSize(1);

    try (TestServer second = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(second.get("/v1/sessions").body().findValuesAsText("session_id"))
          .containsExactly("keep");
      Answer info = second.get("/v1/sessions/keep");
      assertThat(info.text("created_at")).isEqualTo(createdAt);
      assertThat(info.body().path("memory_mb").asInt()).isEqualTo(256);
      assertThat(info.body().path("persistent").asBoolean()).isTrue();
      assertThat(second.exec("keep", "cat /workspace/note", KEEP).stdout()).isEqualTo("kept\n");
      assertThat(second.exec("keep", "cat /tmp/pid 2>&1 || echo fresh", KEEP).stdout())
          .as("a fresh sandbox: only the workspace was kept")
          .contains("fresh");

      assertThat(second.delete("/v1/sessions/keep").status()).isEqualTo(200);
    }
    try (TestServer third = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(third.get("/v1/sessions").body().findValuesAsText("session_id")).isEmpty();
    }
    assertThat(PrivateWorkspaces.names(dataDir)).isEmpty();
    assertThat(dataDir.resolve(".box-state/sessions")).isEmptyDirectory();
  }

  @Test
  void anUnreadableRecord_isSetAside_andTheServerStarts() throws IOException {
    Path records = Files.createDirectories(dataDir.resolve(".box-state/sessions"));
    Files.writeString(records.resolve("persistent_broken-0123abcd.json"), "{ not json");
    Files.writeString(records.resolve(".persistent_half-0123abcd.json.tmp"), "{\"version\"");

    try (TestServer server = TestServer.startOn(dataDir, Clock.systemUTC())) {
      assertThat(server.get("/v1/sessions").body().findValuesAsText("session_id")).isEmpty();
    }
    assertThat(records.resolve("persistent_broken-0123abcd.json.unreadable")).exists();
    assertThat(records.resolve(".persistent_half-0123abcd.json.tmp")).doesNotExist();
  }
}
