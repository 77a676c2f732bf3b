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
 * The API keys Box issues for E2B's control plane, through a real server: issued behind the control
 * token, accepted as {@code X-API-Key}, never shown again nor stored in clear, revoked one by one,
 * and kept across a restart.
 */
class E2bApiKeysTest {
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

  private static Answer listWith(TestServer box, String key) {
    return box.send("GET", "/e2b/v2/sandboxes", "", Map.of("X-API-Key", key));
  }
}
