package dev.box.core.session;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * One lock per session id. Whether the lock table is emptied again cannot be seen from outside
 * (only through memory use over millions of ids), so those tests read its size by reflection.
 */
class KeyedLocksTest {
  private final KeyedLocks locks = new KeyedLocks();

  private int entries() throws ReflectiveOperationException {
    Field field = KeyedLocks.class.getDeclaredField("entries");
    field.setAccessible(true);
    return ((Map<?, ?>) field.get(locks)).size();
  }

  @Test
  void sameKey_waitsUntilTheHolderReleases() throws Exception {
    KeyedLocks.Held first = locks.lock("k");
    AtomicBoolean acquired = new AtomicBoolean();
    CountDownLatch secondHeld = new CountDownLatch(1);
    Thread second =
        lockingThread(
            "k",
            () -> {
              acquired.set(true);
              secondHeld.countDown();
            });

    await().atMost(Duration.ofSeconds(5)).until(() -> second.getState() == Thread.State.WAITING);
    assertThat(acquired).isFalse();

    first.close();

    assertThat(secondHeld.await(5, SECONDS)).isTrue();
    second.join(Duration.ofSeconds(5));
  }

  @Test
  void differentKeys_doNotBlockEachOther() throws Exception {
    try (KeyedLocks.Held first = locks.lock("session-a")) {
      assertThat(lockedOnAnotherThread("session-b").await(5, SECONDS)).isTrue();
    }
  }

  @Test
  void sameKey_isHeldByOneThreadAtATime() throws Exception {
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();
    int[] counter = new int[1];
    int threads = 16;
    int rounds = 2_000;
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    try (KeyedLocks.Held held = locks.lock("shared")) {
                      mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                      counter[0]++;
                      inside.decrementAndGet();
                    }
                  }
                }));
      }
      for (Future<?> future : futures) {
        future.get(30, SECONDS);
      }
    }

    assertThat(mostInside).hasValue(1);
    assertThat(counter[0]).isEqualTo(threads * rounds);
    assertThat(entries()).isZero();
  }

  @Test
  void releasedLock_leavesNoEntry() throws Exception {
    try (KeyedLocks.Held held = locks.lock("k")) {
      assertThat(entries()).isEqualTo(1);
    }

    assertThat(entries()).isZero();
  }

  @Test
  void entry_staysWhileSomeoneWaitsAndGoesWhenTheLastReleases() throws Exception {
    KeyedLocks.Held first = locks.lock("k");
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch secondHeld = new CountDownLatch(1);
    Thread second =
        lockingThread(
            "k",
            () -> {
              secondHeld.countDown();
              release.await(10, SECONDS);
            });
    await().atMost(Duration.ofSeconds(5)).until(() -> second.getState() == Thread.State.WAITING);

    first.close();
    assertThat(secondHeld.await(5, SECONDS)).isTrue();
    assertThat(entries()).isEqualTo(1);

    release.countDown();
    second.join(Duration.ofSeconds(5));
    assertThat(second.isAlive()).isFalse();
    assertThat(entries()).isZero();
  }

  @Test
  void manyDistinctKeys_leaveNoEntriesBehind() throws Exception {
    for (int i = 0; i < 10_000; i++) {
      try (KeyedLocks.Held held = locks.lock("session-" + i)) {
        assertThat(held).isNotNull();
      }
    }

    assertThat(entries()).isZero();
  }

  @Test
  void keyIsReusableAfterRelease() throws Exception {
    locks.lock("k").close();

    assertThat(lockedOnAnotherThread("k").await(5, SECONDS)).isTrue();
  }

  /**
   * Takes and releases the lock of {@code key} on a new thread; the latch opens once it held it.
   */
  private CountDownLatch lockedOnAnotherThread(String key) {
    CountDownLatch held = new CountDownLatch(1);
    lockingThread(key, held::countDown);
    return held;
  }

  /** What a thread does while it holds a lock. */
  private interface WhileHeld {
    void run() throws InterruptedException;
  }

  /** A new thread that takes the lock of {@code key}, does {@code whileHeld}, then releases it. */
  private Thread lockingThread(String key, WhileHeld whileHeld) {
    return Thread.ofPlatform()
        .start(
            () -> {
              try (KeyedLocks.Held held = locks.lock(key)) {
                whileHeld.run();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
  }
}
