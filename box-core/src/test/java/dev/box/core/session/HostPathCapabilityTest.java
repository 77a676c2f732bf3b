package dev.box.core.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.HostSandbox;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.exec.ExecRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backend that does not declare {@link BoxCapabilities#HOST_PATHS} (a cluster's) gets no spec
 * that names a host directory: the runtime refuses it with a validation error before the backend is
 * asked for anything and before a workspace is made. The sandboxes are {@link HostSandbox}es, which
 * isolate nothing: what is checked is what reaches the backend.
 */
class HostPathCapabilityTest {
  @TempDir Path dataDir;
  @TempDir Path host;

  private final ExecutorService pumps = ExecRunner.newPumpPool();
  private final AtomicInteger starts = new AtomicInteger();
  private @Nullable SessionManager opened;

  @AfterEach
  void stop() {
    if (opened != null) {
      opened.close();
    }
    pumps.shutdownNow();
  }

  private SessionManager open(Set<String> capabilities) {
    SandboxBackend backend =
        new SandboxBackend() {
          @Override
          public String name() {
            return "remote";
          }

          @Override
          public BackendStatus status() {
            return new BackendStatus("remote", true, "test", Map.of(), capabilities);
          }

          @Override
          public Sandbox start(SandboxSpec spec) {
            starts.incrementAndGet();
            return new HostSandbox();
          }

          @Override
          public void removeOrphans() {}

          @Override
          public void close() {}
        };
    SessionManager sessions =
        new SessionManager(
            new BackendChoice(backend, "remote", "test", Map.of()),
            new RuntimeConfig(dataDir, Duration.ZERO, 4, 1024, List.of()),
            Clock.systemUTC(),
            System::nanoTime,
            pumps,
            "test",
            SessionListener.NONE,
            new Foreground());
    opened = sessions;
    return sessions;
  }

  @Test
  void aHostPathOrAnExtraMount_isRefused_andNothingIsMadeOrStarted() throws Exception {
    SessionManager sessions = open(Set.of());
    Path missing = host.resolve("to-be-made");
    BoxSpec hostPath = BoxSpec.builder("a").hostPath(missing.toString()).build();
    BoxSpec extra =
        BoxSpec.builder("b")
            .extraMounts(List.of(new BoxMountSpec(host.toString(), "/mnt/x", BoxHostMountMode.RO)))
            .build();

    for (BoxSpec spec : List.of(hostPath, extra)) {
      assertThatThrownBy(() -> sessions.createOrReuse(spec))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("host_path")
          .hasMessageContaining("remote backend");
    }

    assertThat(starts).hasValue(0);
    assertThat(sessions.list()).isEmpty();
    assertThat(missing).doesNotExist();
    try (var made = Files.list(host)) {
      assertThat(made).isEmpty();
    }
  }

  @Test
  void aHostPathOfModeNone_andASpecWithout_start() {
    SessionManager sessions = open(Set.of());

    sessions.createOrReuse(
        BoxSpec.builder("a").hostPath(host.toString()).hostPathMode(BoxHostMountMode.NONE).build());
    sessions.createOrReuse(BoxSpec.builder("b").build());

    assertThat(starts).hasValue(2);
  }

  @Test
  void aBackendThatDeclaresHostPaths_getsThem() {
    SessionManager sessions = open(Set.of(BoxCapabilities.HOST_PATHS));

    sessions.createOrReuse(BoxSpec.builder("a").hostPath(host.toString()).build());

    assertThat(starts).hasValue(1);
  }
}
