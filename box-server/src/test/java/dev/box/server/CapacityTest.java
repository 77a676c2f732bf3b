package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import org.junit.jupiter.api.Test;

/** The session capacity. */
class CapacityTest {

  @Test
  void creatingBeyondMaxSessions_isCapacityExceeded_untilOneIsDeleted() {
    try (TestServer box = TestServer.start("max_sessions", "2")) {
      box.post("/v1/sessions/a", "{}");
      box.post("/v1/sessions/b", "{}");

      Answer third = box.exec("c", "true");

      assertThat(third.status()).isEqualTo(429);
      assertThat(third.errorCode()).isEqualTo("capacity_exceeded");
      assertThat(third.errorMessage()).isEqualTo("Box session capacity reached (2)");
      assertThat(box.exec("a", "true").status()).as("reusing is not creating").isEqualTo(200);
      box.delete("/v1/sessions/a");
      assertThat(box.exec("c", "true").status()).isEqualTo(200);
    }
  }
}
