package dev.box.core.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What background work waits for: no client work under way, settled; or the time it defers at most;
 * or its own reason to go on. The waits that must not end are given ten minutes, so that a wait
 * that ends too early fails its test whatever the machine's speed.
 */
class ForegroundTest {
  private static final Duration LONG = Duration.ofMinutes(10);

  private final ExecutorService waiters = Executors.newCachedThreadPool();

  @AfterEach
  void stopWaiters() {
    waiters.shutdownNow();
  }

  private CompletableFuture<Boolean> waitAside(Foreground foreground, AtomicBoolean goOn) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return foreground.awaitQuiet(goOn::get);
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        },
        waiters);
  }

  /** {@code waiter} has not ended, and does not for {@code time}. */
  private static void assertWaitsFor(CompletableFuture<Boolean> waiter, Duration time) {
    await().during(time).atMost(time.plusSeconds(5)).until(() -> !waiter.isDone());
  }

  @Test
  void aServerThatRanNothing_isQuietAtOnce() throws Exception {
    Foreground foreground = new Foreground(LONG);
    assertThat(foreground.busy()).isFalse();
    assertThat(waitAside(foreground, new AtomicBoolean()).get(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aWait_lastsAsLongAsTheWork_andEndsAfterIt() throws Exception {
    Foreground foreground = new Foreground(LONG);
    Foreground.Work work = foreground.begin();
    CompletableFuture<Boolean> waiter = waitAside(foreground, new AtomicBoolean());
    assertWaitsFor(waiter, Duration.ofMillis(500));
    assertThat(foreground.busy()).isTrue();

    work.close();
    assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
    assertThat(foreground.busy()).isFalse();
  }

  @Test
  void workThatOverlaps_keepsTheServerBusyUntilTheLastEnds() throws Exception {
    Foreground foreground = new Foreground(LONG);
    Foreground.Work first = foreground.begin();
    Foreground.Work second = foreground.begin();
    CompletableFuture<Boolean> waiter = waitAside(foreground, new AtomicBoolean());
    first.close();
    // Closing one twice does not end the other.
    first.close();
    assertWaitsFor(waiter, Duration.ofMillis(500));
    assertThat(foreground.busy()).isTrue();

    second.close();
    assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aWaitWhoseCallerMustGoOn_endsWhileTheWorkRuns() throws Exception {
    Foreground foreground = new Foreground(LONG);
    try (Foreground.Work work = foreground.begin()) {
      AtomicBoolean goOn = new AtomicBoolean();
      CompletableFuture<Boolean> waiter = waitAside(foreground, goOn);
      assertWaitsFor(waiter, Duration.ofMillis(200));

      goOn.set(true);
      assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
      assertThat(foreground.busy()).isTrue();
    }
  }

  @Test
  void aWait_endsWhenTheTimeItDefersRunsOut_evenWhileTheWorkRuns() throws Exception {
    Foreground foreground = new Foreground(Duration.ofMillis(50));
    try (Foreground.Work work = foreground.begin()) {
      assertThat(waitAside(foreground, new AtomicBoolean()).get(30, TimeUnit.SECONDS)).isFalse();
      assertThat(foreground.busy()).isTrue();
    }
  }
}
