package dev.box.core.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.HostBackend;
import dev.box.core.backend.HostSandbox;
import dev.box.core.exec.ExecRunner;
import dev.box.core.session.SessionListener.ExecEnd;
import dev.box.core.session.SessionListener.ExecEnded;
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
 * What the runtime tells its listener (the server's metrics) about execs and session starts, with
 * real commands run on the host.
 *
 * <p>The sandboxes are {@link HostSandbox}es, which isolate nothing: box-core cannot depend on a
 * real backend, and what is checked here is which events fire with what; the server's metrics test
 * runs the same through real bubblewrap sandboxes.
 */
class SessionListenerTest {
  @TempDir Path dataDir;

  private final Recorder recorder = new Recorder();
  private final ExecutorService pumps = ExecRunner.newPumpPool();
  private SessionManager sessions;

  @BeforeEach
  void start() {
    RuntimeConfig config = new RuntimeConfig(dataDir, Duration.ZERO, 4, 1024, List.of());
    sessions =
        new SessionManager(
            new BackendChoice(new HostBackend(HostSandbox::new), "host", "test", Map.of()),
            config,
            Clock.systemUTC(),
            System::nanoTime,
            pumps,
            "test",
            recorder,
            new Foreground());
  }

  @AfterEach
  void stop() {
    sessions.close();
    pumps.shutdownNow();
  }

  private static BoxSpec exec(String cmd) {
    return BoxSpec.builder("s1").workdir("/tmp").cmd(cmd).build();
  }

  @Test
  void eachExecFiresOnce_withHowItEnded() {
    sessions.exec(exec("true"));
    sessions.exec(exec("exit 3"));
    sessions.exec(BoxSpec.builder("s1").workdir("/tmp").cmd("sleep 10").timeoutSec(1).build());

    assertThat(recorder.execs)
        .extracting(ExecEnded::end)
        .containsExactly(ExecEnd.OK, ExecEnd.NONZERO, ExecEnd.TIMEOUT);
    assertThat(recorder.execs).extracting(ExecEnded::backend).containsOnly("host");
    assertThat(recorder.execs.get(2).duration())
        .as("a timed-out exec lasts at least its timeout")
        .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void outputBeyondTheLimit_isReportedAsTruncated_perStream() {
    sessions.exec(exec("head -c 5000 /dev/zero >&2; echo small"));

    ExecEnded exec = recorder.execs.getFirst();
    assertThat(exec.end()).isEqualTo(ExecEnd.OK);
    assertThat(exec.stderrTruncated()).isTrue();
    assertThat(exec.stdoutTruncated()).isFalse();
  }

  @Test
  void anExecWithNoResult_firesAsError_andARefusedOneDoesNotFire() {
    sessions.exec(exec("true"));

    assertThatThrownBy(
            () ->
                sessions.exec(
                    BoxSpec.builder("s1")
                        .workdir("/tmp")
                        .network(BoxNetworkMode.ON)
                        .cmd("true")
                        .build()))
        .isInstanceOf(BoxSessionConflictException.class);
    assertThatThrownBy(() -> sessions.exec(BoxSpec.builder("s1").workdir("/tmp").build()))
        .isInstanceOf(BoxValidationException.class);

    assertThat(recorder.execs)
        .extracting(ExecEnded::end)
        .containsExactly(ExecEnd.OK, ExecEnd.ERROR);
  }

  @Test
  void aSessionStartFiresOnce_andReuseDoesNot() {
    sessions.createOrReuse(BoxSpec.builder("a").build());
    sessions.createOrReuse(BoxSpec.builder("a").build());
    sessions.exec(exec("true"));

    assertThat(recorder.starts).containsExactly("host pre-started=false", "host pre-started=false");
  }

  /** Records every event. */
  private static final class Recorder implements SessionListener {
    final List<ExecEnded> execs = new CopyOnWriteArrayList<>();
    final List<String> starts = new CopyOnWriteArrayList<>();

    @Override
    public void execEnded(ExecEnded exec) {
      execs.add(exec);
    }

    @Override
    public void sessionStarted(String backend, boolean preStarted, Duration duration) {
      starts.add(backend + " pre-started=" + preStarted);
    }
  }
}
