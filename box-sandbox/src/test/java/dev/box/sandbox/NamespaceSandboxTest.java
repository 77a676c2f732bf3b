package dev.box.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two ends of one sandbox at once: the agent link's, which broke when the sandbox was killed from
 * outside, and the session's, which replaces it under the same name. The jail is a real process
 * ({@code sleep}); the cgroups are a stand-in whose sweep the test holds, since the real ones
 * cannot be made to stall on demand.
 */
class NamespaceSandboxTest {
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @Test
  void aDestroyMadeWhileAnotherRuns_returnsOnlyOnceThatOneHasSweptTheCgroups() throws Exception {
    Process jail = new ProcessBuilder("sleep", "600").start();
    HeldSweep cgroup = new HeldSweep();
    NamespaceSandbox sandbox =
        new NamespaceSandbox(
            "inst_s-1",
            jail,
            jail.pid(),
            cgroup,
            new Launcher(Path.of("/usr/bin/setpriv"), Path.of("/usr/bin/nsenter"), false),
            null,
            null,
            new AtomicBoolean());

    CompletableFuture<Void> first = CompletableFuture.runAsync(sandbox::destroy, threads);
    assertThat(cgroup.started.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(sandbox.isAlive()).isFalse();
    CompletableFuture<Void> second = CompletableFuture.runAsync(sandbox::destroy, threads);
    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(5))
        .until(() -> !second.isDone());

    cgroup.release.countDown();
    first.get(30, TimeUnit.SECONDS);
    second.get(30, TimeUnit.SECONDS);
    assertThat(cgroup.sweeps.get()).isEqualTo(1);
    assertThat(jail.isAlive()).isFalse();
  }

  /** Cgroups whose sweep waits until the test releases it; counts the sweeps. */
  private static final class HeldSweep implements CgroupDriver.SessionCgroup {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger sweeps = new AtomicInteger();

    @Override
    public CgroupDriver.ProcessCgroup createProcessGroup(int memoryMb) {
      throw new UnsupportedOperationException("runs nothing");
    }

    @Override
    public void destroy() {
      sweeps.incrementAndGet();
      started.countDown();
      try {
        release.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
