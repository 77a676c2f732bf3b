package dev.box.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessNotFoundException;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.client.ProcessRecorder.Closed;
import dev.box.client.ProcessRecorder.Failed;
import io.javalin.Javalin;
import java.net.URI;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How the client reads the relay's close codes. A real server closes with an error code only when
 * the process disappears between the upgrade and the first frame, a race no test can provoke on
 * purpose; so a WebSocket server on loopback closes every relay at once with the code and reason
 * the test sets, which are the ones the real server sends.
 */
class RelayCloseTest {
  private Javalin server;
  private BoxClient client;
  private final ProcessRecorder recorder = new ProcessRecorder();
  private volatile int closeCode;
  private volatile String closeReason = "";

  @BeforeEach
  void start() {
    server =
        Javalin.create(
                config ->
                    config.routes.ws(
                        "/v1/sessions/{id}/managed-process/{pid}/ws",
                        ws -> ws.onConnect(ctx -> ctx.closeSession(closeCode, closeReason))))
            .start("127.0.0.1", 0);
    client = BoxClient.builder(URI.create("http://127.0.0.1:" + server.port())).build();
  }

  @AfterEach
  void stop() {
    client.close();
    server.stop();
  }

  private ProcessRecorder.Event endOfRelayClosedWith(int code, String reason) {
    closeCode = code;
    closeReason = reason;
    client.attach("s", "p", recorder);
    return recorder.next();
  }

  @Test
  void anErrorClose_endsTheAttachmentWithTheServersException() {
    Failed failed =
        (Failed)
            endOfRelayClosedWith(
                4404, "managed_process_not_found: session s has no managed process p");

    assertThat(failed.failure())
        .isInstanceOf(BoxManagedProcessNotFoundException.class)
        .hasMessage("session s has no managed process p");
  }

  @Test
  void anErrorCloseOfTheSameCode_isToldApartByItsReason() {
    Failed failed = (Failed) endOfRelayClosedWith(4404, "session_not_found: session s not found");

    assertThat(failed.failure()).isInstanceOf(BoxSessionNotFoundException.class);
  }

  @Test
  void anInternalError_isAFailureToo() {
    Failed failed =
        (Failed)
            endOfRelayClosedWith(1011, "internal_error: internal error: IllegalStateException");

    assertThat(((BoxException) failed.failure()).code()).isEqualTo(BoxErrorCode.INTERNAL_ERROR);
  }

  @Test
  void aCloseThatReportsNoError_isAClose() {
    assertThat(endOfRelayClosedWith(1009, "stdout line longer than the 65536-byte buffer"))
        .isEqualTo(new Closed(1009, "stdout line longer than the 65536-byte buffer"));
  }
}
