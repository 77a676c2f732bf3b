package dev.box.core.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxExecutionStatus;
import dev.box.core.backend.HostSandbox;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.time.FakeTicker;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How {@link ExecRunner} leaves a process: released once it is done with it, however it ends. */
class ExecRunnerTest {
  private final HostSandbox sandbox = new HostSandbox();
  private final ExecutorService pumps = ExecRunner.newPumpPool();
  private final ExecRunner runner = new ExecRunner(1024, System::nanoTime, pumps);

  @AfterEach
  void stopPumps() {
    pumps.shutdownNow();
  }

  private static ProcessSpec shell(String script) {
    return new ProcessSpec(new ProcessSpec.Shell(script), "/", Map.of(), false);
  }

  @Test
  void exit_releasesTheProcess() throws Exception {
    ExecOutcome outcome = runner.run(sandbox, shell("echo hi"), Duration.ofSeconds(30));

    assertThat(outcome.status()).isEqualTo(BoxExecutionStatus.COMPLETED);
    assertThat(sandbox.spawned().getFirst().releases()).isEqualTo(1);
  }

  @Test
  void interrupt_killsTheTree_andReleasesTheProcess_beforeRethrowing() throws Exception {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread caller =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    runner.run(sandbox, shell("sleep 60"), Duration.ofSeconds(60));
                    thrown.complete(new AssertionError("run returned"));
                  } catch (Throwable t) {
                    thrown.complete(t);
                  }
                });
    await().until(() -> !sandbox.spawned().isEmpty());

    caller.interrupt();

    assertThat(thrown.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    HostSandbox.HostProcess process = sandbox.spawned().getFirst();
    assertThat(process.kills()).isPositive();
    assertThat(process.releases()).isEqualTo(1);
    await().until(() -> !process.isAlive());
  }

  @Test
  void duration_isWhatTheTickerSaysTheCommandTook() throws Exception {
    FakeTicker ticker = new FakeTicker();
    ExecRunner timed = new ExecRunner(1024, ticker, pumps);
    Sandbox slow = new HostSandbox(() -> ticker.advance(Duration.ofMillis(1500)));

    ExecOutcome outcome = timed.run(slow, shell("echo hi"), Duration.ofSeconds(30));

    assertThat(outcome.status()).isEqualTo(BoxExecutionStatus.COMPLETED);
    assertThat(outcome.stdout()).isEqualTo("hi\n");
    assertThat(outcome.durationMs()).isEqualTo(1500);
  }

  @Test
  void pumps_runOnTheGivenExecutor_onePerStream() throws Exception {
    AtomicInteger pumped = new AtomicInteger();
    ExecRunner given =
        new ExecRunner(
            1024,
            System::nanoTime,
            task -> {
              pumped.incrementAndGet();
              pumps.execute(task);
            });

    given.run(sandbox, shell("echo hi; echo oops >&2"), Duration.ofSeconds(30));

    assertThat(pumped).hasValue(2);
  }
}
