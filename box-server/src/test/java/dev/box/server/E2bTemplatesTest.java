package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.testclient.Answer;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What E2B's {@code templateID} maps to, through a real server: one of Box's profiles on bubblewrap
 * (its image, limits and locked fields), and, on Docker, an image of that name; a template that is
 * neither is E2B's 404, and a profile's locked network is not overridden.
 */
class E2bTemplatesTest {
  @Test
  void aProfileTemplate_givesItsLimitsAndLocks_onBubblewrap() {
    try (TestServer box = TestServer.start()) {
      JsonNode session = create(box, "{\"templateID\":\"offline_readonly\"}");
      assertThat(session.path("network").asText()).isEqualTo("off");
      assertThat(session.path("read_only_rootfs").asBoolean()).isTrue();
      assertThat(session.path("memory_mb").asInt()).isEqualTo(256);

      Answer locked =
          control(
              box,
              "POST",
              "/e2b/v2/sandboxes",
              "{\"templateID\":\"offline_readonly\",\"allow_internet_access\":true}");
      assertThat(locked.status()).isEqualTo(400);
      assertThat(locked.body().path("message").asText()).contains("locks the network off");
      Answer image = control(box, "POST", "/e2b/v2/sandboxes", "{\"templateID\":\"python:3.12\"}");
      assertThat(image.status()).isEqualTo(404);
      assertThat(image.body().path("message").asText()).contains("offline_readonly");
    }
  }

  @Test
  void anImageTemplate_isThatImage_onDocker() {
    String image = System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm");
    try (TestServer box = TestServer.start(TestServer.docker())) {
      JsonNode session = create(box, "{\"templateID\":\"" + image + "\"}");
      assertThat(session.path("image").asText()).isEqualTo(image);
      Answer ran =
          box.exec(
              session.path("session_id").asText(),
              "echo ran",
              "\"image\":\""
                  + image
                  + "\",\"mount_path\":\"/home/user\",\"workdir\":\"/home/user\","
                  + "\"persistent\":true,\"network\":\"on\"");
      assertThat(ran.stdout()).as(ran.body().toString()).isEqualTo("ran\n");
    }
  }

  /** Creates a sandbox from {@code body} and answers its Box session. */
  private static JsonNode create(TestServer box, String body) {
    Answer created = control(box, "POST", "/e2b/v2/sandboxes", body);
    assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
    String session = "e2b-" + created.text("sandboxID");
    Answer info = box.get("/v1/sessions/" + session);
    assertThat(info.status()).as(info.body().toString()).isEqualTo(200);
    return info.body();
  }

  private static Answer control(TestServer box, String method, String path, String body) {
    return box.send(
        method,
        path,
        body,
        Map.of("X-API-Key", String.valueOf(box.token()), "Content-Type", "application/json"));
  }
}
