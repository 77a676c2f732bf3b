package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.testclient.Answer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What E2B's API keeps, through a real server on bubblewrap and its restart on the same data
 * directory: the API keys Box issues (issued behind the control token, accepted as {@code
 * X-API-Key}, never shown again nor stored in clear, revoked one by one) and the sandboxes, with
 * their files, access tokens and ends.
 */
class E2bStateTest {
  private static final String KEYS = "/v1/e2b/api-keys";

  @TempDir Path dataDir;

  @Test
  void anIssuedKey_opensTheControlPlane_untilItIsRevoked_andOutlivesARestart() throws IOException {
    JsonNode issued;
    try (TestServer box = TestServer.startOn(dataDir, Clock.systemUTC())) {
      Answer created = box.post(KEYS, "{\"name\":\"ci runner\"}");
      assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
      issued = created.body();
      assertThat(issued.path("key").asText()).matches("e2b_[0-9a-f]{40}");
      assertThat(issued.path("name").asText()).isEqualTo("ci runner");
      assertThat(listWith(box, issued.path("key").asText()).status()).isEqualTo(200);

      Answer listed = box.get(KEYS);
      assertThat(listed.body().findValuesAsText("id")).containsExactly(issued.path("id").asText());
      assertThat(listed.body().toString()).doesNotContain(issued.path("key").asText());

      Path file = dataDir.resolve(".box-state/e2b-api-keys.json");
      assertThat(Files.readString(file, StandardCharsets.UTF_8))
          .doesNotContain(issued.path("key").asText());
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
          .isEqualTo("rw-------");
    }
    try (TestServer again = TestServer.startOn(dataDir, Clock.systemUTC())) {
      String key = issued.path("key").asText();
      assertThat(listWith(again, key).status()).isEqualTo(200);
      assertThat(again.delete(KEYS + "/" + issued.path("id").asText()).status()).isEqualTo(204);
      Answer refused = listWith(again, key);
      assertThat(refused.status()).isEqualTo(401);
      assertThat(refused.body().path("code").asInt()).isEqualTo(401);
      assertThat(again.get(KEYS).body()).isEmpty();
    }
  }

  @Test
  void keys_areIssuedOnlyWithTheControlToken_andBadRequestsAreBoxErrors() {
    try (TestServer box = TestServer.startOn(dataDir, Clock.systemUTC())) {
      String key = box.post(KEYS, "{\"name\":\"first\"}").body().path("key").asText();
      Answer byKey =
          box.send("POST", KEYS, "{\"name\":\"second\"}", Map.of("Authorization", "Bearer " + key));
      assertThat(byKey.status()).isEqualTo(401);
      assertThat(byKey.body().path("error").path("code").asText()).isEqualTo("unauthorized");
      assertThat(box.send("POST", KEYS, "{\"name\":\"x\"}", Map.of("X-API-Key", key)).status())
          .isEqualTo(401);

      for (String bad : new String[] {"{}", "{\"name\":\"\"}", "{\"name\":\"a/b\"}", "[", "1"}) {
        Answer refused = box.post(KEYS, bad);
        assertThat(refused.status()).as(bad).isEqualTo(400);
        assertThat(refused.body().path("error").path("code").asText())
            .as(bad)
            .isEqualTo("validation_error");
      }
      Answer unknown = box.delete(KEYS + "/key_nosuchkey");
      assertThat(unknown.status()).isEqualTo(404);
      assertThat(unknown.body().path("error").path("code").asText()).isEqualTo("not_found");
    }
  }

  @Test
  void aSandbox_outlivesARestart_withItsFilesTokenAndEnd() throws IOException {
    String id;
    String token;
    try (TestServer box = TestServer.startOn(dataDir, Clock.systemUTC())) {
      Answer created =
          control(box, "POST", "/e2b/v2/sandboxes", "{\"metadata\":{\"k\":\"v\"},\"timeout\":600}");
      assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
      id = created.text("sandboxID");
      token = created.text("envdAccessToken");
      Answer written =
          box.send(
              "POST",
              "/e2b/envd/files?path=kept.txt",
              "kept across a restart",
              Map.of(
                  "E2b-Sandbox-Id", id,
                  "X-Access-Token", token,
                  "Content-Type", "application/octet-stream"));
      assertThat(written.status()).as(written.body().toString()).isEqualTo(200);
    }
    Path record = dataDir.resolve(".box-state/e2b-sandboxes/" + id + ".json");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(record)))
        .isEqualTo("rw-------");
    try (TestServer again = TestServer.startOn(dataDir, Clock.systemUTC())) {
      Answer info = control(again, "GET", "/e2b/sandboxes/" + id, "");
      assertThat(info.status()).as(info.body().toString()).isEqualTo(200);
      assertThat(info.body().path("metadata").path("k").asText()).isEqualTo("v");
      Answer stat =
          again.send(
              "POST",
              "/e2b/envd/filesystem.Filesystem/Stat",
              "{\"path\":\"/home/user/kept.txt\"}",
              Map.of(
                  "E2b-Sandbox-Id", id,
                  "X-Access-Token", token,
                  "Content-Type", "application/json"));
      assertThat(stat.status()).as(stat.body().toString()).isEqualTo(200);
      assertThat(stat.body().path("entry").path("size").asLong())
          .isEqualTo("kept across a restart".length());

      assertThat(control(again, "DELETE", "/e2b/sandboxes/" + id, "").status()).isEqualTo(204);
      assertThat(record).doesNotExist();
      assertThat(again.get("/v1/sessions").body()).isEmpty();
    }
  }

  private static Answer control(TestServer box, String method, String path, String body) {
    return box.send(
        method,
        path,
        body,
        Map.of("X-API-Key", String.valueOf(box.token()), "Content-Type", "application/json"));
  }

  private static Answer listWith(TestServer box, String key) {
    return box.send("GET", "/e2b/v2/sandboxes", "", Map.of("X-API-Key", key));
  }
}
