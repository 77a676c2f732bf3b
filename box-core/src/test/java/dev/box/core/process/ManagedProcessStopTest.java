package dev.box.core.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.api.BoxManagedProcessSpec;
import dev.box.core.backend.HostSandbox;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link ManagedProcess#stop} from a thread that is being interrupted. */
class ManagedProcessStopTest {
  private final HostSandbox sandbox = new HostSandbox();

  @Test
  void stop_keepsTheCallersInterrupt_andStillKillsAndReleasesTheProcess() throws Exception {
    ManagedProcess managed =
        ManagedProcess.start(
            "s",
            new BoxManagedProcessSpec("sleeper", "sleep", List.of("60"), Map.of(), "/", 0),
            sandbox,
            1024,
            Clock.systemUTC(),
            System::nanoTime,
            p -> {});
    AtomicBoolean interruptedAfterStop = new AtomicBoolean();

    Thread stopper =
        Thread.ofPlatform()
            .start(
                () -> {
                  Thread.currentThread().interrupt();
                  managed.stop();
                  interruptedAfterStop.set(Thread.currentThread().isInterrupted());
                });
    stopper.join(20_000);

    assertThat(stopper.isAlive()).isFalse();
    assertThat(interruptedAfterStop).as("the interrupt is still set after stop").isTrue();
    HostSandbox.HostProcess process = sandbox.spawned().getFirst();
    assertThat(process.kills()).isPositive();
    await().until(() -> !managed.isRunning());
    assertThat(process.isAlive()).isFalse();
    assertThat(process.releases()).isPositive();
  }
}
