package dev.box.core.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSpec;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.HostBackend;
import dev.box.core.backend.HostSandbox;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.exec.ExecRunner;
import dev.box.testclient.ManualClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A process spawned in a session for a caller that relays it ({@link ProcessManager#spawn}): the
 * session's activity while it runs, ended with the session. Real host processes ({@link
 * HostSandbox}), a clock the test moves.
 */
class SpawnedProcessTest {
  private static final ProcessSpec SLEEP =
      new ProcessSpec(new ProcessSpec.Argv(List.of("sleep", "300")), "/tmp", Map.of(), true);

  @TempDir Path dataDir;

  private final ExecutorService pumps = ExecRunner.newPumpPool();
  private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
  private SessionManager sessions;

  @BeforeEach
  void start() {
    RuntimeConfig config = new RuntimeConfig(dataDir, Duration.ofMinutes(1), 4, 1024, List.of());
    sessions =
        new SessionManager(
            new BackendChoice(new HostBackend(HostSandbox::new), "host", "test", Map.of()),
            config,
            clock,
            System::nanoTime,
            pumps,
            "test",
            SessionListener.NONE,
            new Foreground());
    sessions.createOrReuse(BoxSpec.builder("s1").workdir("/tmp").build());
  }

  @AfterEach
  void stop() {
    sessions.close();
    pumps.shutdownNow();
  }

  @Test
  void aRunningProcess_keepsItsSessionFromBeingReaped_untilItExits() throws Exception {
    SandboxProcess process = sessions.processes().spawn("s1", SLEEP);
    clock.advance(Duration.ofHours(1));
    assertThat(sessions.reapIdle()).isZero();

    process.killTree();
    // Its exit reaches the session after the exit itself: reaped once that is told.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              clock.advance(Duration.ofHours(1));
              return sessions.reapIdle() == 1;
            });
  }

  @Test
  void deletingTheSession_killsTheProcess() throws Exception {
    SandboxProcess process = sessions.processes().spawn("s1", SLEEP);
    sessions.delete("s1");
    assertThat(process.onExit().get(30, TimeUnit.SECONDS)).isNotZero();
    assertThatThrownBy(() -> sessions.processes().spawn("s1", SLEEP))
        .isInstanceOf(BoxSessionNotFoundException.class);
  }
}
