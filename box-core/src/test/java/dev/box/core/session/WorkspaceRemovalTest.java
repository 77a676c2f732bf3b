package dev.box.core.session;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxSpec;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.HostBackend;
import dev.box.core.backend.HostSandbox;
import dev.box.core.exec.ExecRunner;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workspace a backend keeps for a sandbox itself (a cluster's claim) goes with a deleted
 * session only: a server that stops keeps a persistent session's, for the next server to restore.
 */
class WorkspaceRemovalTest {
  @TempDir Path dataDir;

  private final List<HostSandbox> started = new CopyOnWriteArrayList<>();
  private final ExecutorService pumps = ExecRunner.newPumpPool();
  private SessionManager sessions;

  @BeforeEach
  void start() {
    RuntimeConfig config = new RuntimeConfig(dataDir, Duration.ZERO, 4, 1024, List.of());
    HostBackend backend =
        new HostBackend(
            () -> {
              HostSandbox sandbox = new HostSandbox();
              started.add(sandbox);
              return sandbox;
            });
    sessions =
        new SessionManager(
            new BackendChoice(backend, "host", "test", Map.of()),
            config,
            Clock.systemUTC(),
            System::nanoTime,
            pumps,
            "test",
            SessionListener.NONE,
            new Foreground());
  }

  @AfterEach
  void stop() {
    pumps.shutdownNow();
  }

  @Test
  void aDeletedSession_hasItsWorkspaceRemoved_aStoppedPersistentOneKeepsIt() {
    sessions.createOrReuse(BoxSpec.builder("deleted").build());
    sessions.createOrReuse(BoxSpec.builder("kept").persistent(true).build());

    sessions.delete("deleted");
    sessions.close();

    assertThat(started).extracting(HostSandbox::workspaceRemovals).containsExactly(1, 0);
  }
}
