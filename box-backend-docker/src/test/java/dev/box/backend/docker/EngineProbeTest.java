package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.core.backend.BackendStatus;
import dev.box.core.net.NetnsFirewall;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.engine.EngineClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The probe's memory of the engine's answer, read against a fake ticker: an engine that was not
 * there is asked again only once the answer is a few seconds old, and one that serves is not asked
 * again until the backend says so. The engine is {@link FakeEngine} on a socket of the test's own.
 */
class EngineProbeTest {
  @TempDir Path dir;

  private final AtomicLong now = new AtomicLong();
  private @Nullable EngineClient client;

  @AfterEach
  void closeClient() {
    if (client != null) {
      client.close();
    }
  }

  private EngineProbe probe(Path socket) {
    client = new EngineClient(socket, BackendRuntime.system());
    EngineCheck check =
        new EngineCheck(
            "docker",
            socket,
            client,
            NetnsFirewall.probe(),
            EngineProfile.read(null),
            "engine-default",
            () -> true,
            () -> "none",
            () -> true);
    return new EngineProbe(check, now::get);
  }

  @Test
  void anEngineThatWasNotThereIsAskedAgainOnlyOnceTheAnswerIsOld() throws Exception {
    Path socket = dir.resolve("engine.sock");
    EngineProbe probe = probe(socket);
    assertThat(probe.status().available()).isFalse();
    assertThat(probe.status().reason()).startsWith("no Docker Engine API socket at " + socket);

    try (FakeEngine engine = FakeEngine.start(socket)) {
      now.addAndGet(Duration.ofSeconds(5).toNanos());
      assertThat(probe.status().available()).as("five seconds are not yet too old").isFalse();
      assertThat(engine.requests("/version")).isZero();

      now.addAndGet(1);
      BackendStatus status = probe.status();
      assertThat(status.available()).isTrue();
      assertThat(status.reason()).isEqualTo("Docker Engine fake (API 1.41) at " + socket);
      assertThat(engine.requests("/version")).isEqualTo(1);
    }
  }

  @Test
  void anEngineThatServesIsAskedAgainOnlyWhenRefreshed() throws Exception {
    Path socket = dir.resolve("engine.sock");
    try (FakeEngine engine = FakeEngine.start(socket)) {
      EngineProbe probe = probe(socket);
      now.addAndGet(Duration.ofMinutes(1).toNanos());
      assertThat(probe.status().available()).isTrue();
      assertThat(engine.requests("/version")).isEqualTo(1);

      assertThat(probe.refresh().available()).isTrue();
      assertThat(engine.requests("/version")).isEqualTo(2);
    }
  }
}
