package dev.box.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.core.backend.Foreground;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pool's bookkeeping: a pre-start that fails is tried again a few times before the pool waits
 * for the next take, and a take that finds the pool empty while a start is under way waits for that
 * start instead of starting a sandbox beside it. The sandboxes here are stand-ins that run nothing:
 * the real backends' pool suite ({@link PooledBackendSuite}) cannot make a start fail or stall on
 * demand.
 */
class SandboxPoolTest {
  @TempDir Path slots;

  private final ExecutorService takers = Executors.newCachedThreadPool();

  @Test
  void aPreStartThatFailsTwice_isTriedAgain_andThePoolFills() {
    FailingStarts starts = new FailingStarts(2);
    try (SandboxPool pool = pool(starts)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() == 1);
      assertThat(starts.count()).isEqualTo(3);
    }
  }

  @Test
  void aPreStartThatKeepsFailing_isTriedFourTimes_thenWaitsForTheNextTake() {
    FailingStarts starts = new FailingStarts(Integer.MAX_VALUE);
    try (SandboxPool pool = pool(starts)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> starts.count() == 4);
      await()
          .during(Duration.ofSeconds(5))
          .atMost(Duration.ofSeconds(6))
          .until(() -> starts.count() == 4);
      assertThat(pool.idle()).isZero();
    }
  }

  @Test
  void aTakeThatFindsThePoolEmpty_whileAStartIsUnderWay_getsTheSandboxItBrings() throws Exception {
    try (Held held = drained(new HeldStarts(0), Executors.newSingleThreadExecutor())) {
      HeldStarts starts = held.starts();
      SandboxPool pool = held.pool();
      CompletableFuture<@Nullable Sandbox> waiter = takeAside(pool, "b");
      await().atMost(Duration.ofSeconds(30)).until(() -> pool.waiting() == 1);
      assertThat(waiter).isNotDone();

      starts.release(1);
      Sandbox taken = waiter.get(30, TimeUnit.SECONDS);
      assertThat(taken).isNotNull();
      assertThat(taken.id()).isEqualTo("inst_pool-2");
      assertThat(pool.taken()).isEqualTo(2);
    }
  }

  @Test
  void eachTakeThatWaits_addsAStartOfItsOwn_andEachIsServed() throws Exception {
    try (Held held = drained(new HeldStarts(0), Executors.newCachedThreadPool())) {
      HeldStarts starts = held.starts();
      SandboxPool pool = held.pool();
      CompletableFuture<@Nullable Sandbox> first = takeAside(pool, "b");
      starts.awaitStarted(3);
      CompletableFuture<@Nullable Sandbox> second = takeAside(pool, "c");
      starts.awaitStarted(4);
      assertThat(pool.waiting()).isEqualTo(2);

      starts.release(3);
      assertThat(first.get(30, TimeUnit.SECONDS)).isNotNull();
      assertThat(second.get(30, TimeUnit.SECONDS)).isNotNull();
      assertThat(pool.taken()).isEqualTo(3);
      // The third start refills the pool; nothing beyond its size is kept.
      await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() == 1);
    }
  }

  @Test
  void aStartBeyondWhatThePoolWants_onceItsTakeLeft_isDestroyed() throws Exception {
    try (Held held = drained(new HeldStarts(0), Executors.newCachedThreadPool())) {
      HeldStarts starts = held.starts();
      SandboxPool pool = held.pool();
      CompletableFuture<@Nullable Sandbox> waiter = takeAside(pool, "b");
      starts.awaitStarted(3);
      // The take gives up (its thread is interrupted) while its start is under way.
      takers.shutdownNow();
      assertThat(waiter.get(30, TimeUnit.SECONDS)).isNull();
      assertThat(pool.waiting()).isZero();

      starts.release(2);
      await().atMost(Duration.ofSeconds(30)).until(() -> starts.made().size() == 3);
      await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() == 1);
      // Of the two that ended, one refills the pool of one; the other is not kept running.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> starts.made().stream().skip(1).filter(Sandbox::isAlive).count() == 1);
    }
  }

  @Test
  void aTakeThatWaitsForAStartThatFails_getsNothing_andTheCallerStartsItsOwn() throws Exception {
    try (Held held = held(new HeldStarts(Integer.MAX_VALUE), 1, Executors.newCachedThreadPool())) {
      HeldStarts starts = held.starts();
      SandboxPool pool = held.pool();
      starts.awaitStarted(1);
      CompletableFuture<@Nullable Sandbox> waiter = takeAside(pool, "a");
      // The take's own start is held too; the first start's failure is enough to stop waiting.
      starts.awaitStarted(2);

      starts.release(1);
      assertThat(waiter.get(30, TimeUnit.SECONDS)).isNull();
      assertThat(pool.taken()).isZero();
    }
  }

  @Test
  void whileThePoolsStartsFail_aTakeDoesNotWait() throws Exception {
    try (Held held = held(new HeldStarts(1), 1, Executors.newCachedThreadPool())) {
      HeldStarts starts = held.starts();
      SandboxPool pool = held.pool();
      starts.release(1);
      // The first start failed; the second, a second later, is held.
      starts.awaitStarted(2);
      assertThat(takeAside(pool, "a").get(30, TimeUnit.SECONDS)).isNull();
      assertThat(pool.waiting()).isZero();
    }
  }

  @Test
  void aPoolThatTakesDrain_startsAsManyAtOnceAsItsSizeAndTheCoresAllow() {
    int parallel = SandboxPool.parallel(2);
    try (Held held = held(new HeldStarts(0), 2, Executors.newCachedThreadPool())) {
      held.starts().release(2);
      await().atMost(Duration.ofSeconds(30)).until(() -> held.pool().idle() == 2);
      assertThat(held.pool().take(session("a"))).isNotNull();
      assertThat(held.pool().take(session("b"))).isNotNull();
      // No take waits: the refills alone run side by side.
      held.starts().awaitStarted(2 + parallel);
      assertThat(held.pool().waiting()).isZero();
    }
  }

  @Test
  void whileASandboxStillWaits_theStartThatReplacesATakenOne_waitsForTheClientWorkUnderWay() {
    Foreground foreground = new Foreground(Duration.ofMinutes(10));
    FailingStarts starts = new FailingStarts(0);
    try (SandboxPool pool = filledPoolOfTwo(starts, foreground)) {
      Foreground.Work create = foreground.begin();
      assertThat(pool.take(session("a"))).isNotNull();
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> starts.count() == 2);

      create.close();
      await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() == 2);
      assertThat(starts.count()).isEqualTo(3);
    }
  }

  @Test
  void onceNoSandboxWaits_aStartGoesAtOnce_whateverClientWorkIsUnderWay() {
    Foreground foreground = new Foreground(Duration.ofMinutes(10));
    FailingStarts starts = new FailingStarts(0);
    try (SandboxPool pool = filledPoolOfTwo(starts, foreground)) {
      try (Foreground.Work creates = foreground.begin()) {
        assertThat(pool.take(session("a"))).isNotNull();
        assertThat(pool.take(session("b"))).isNotNull();
        // The first take's start deferred to the creates; with the pool empty, it goes now.
        await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() >= 1);
        assertThat(foreground.busy()).isTrue();
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() == 2);
    }
  }

  /**
   * A pool of two whose client work is {@code foreground}, once both its first sandboxes wait:
   * nothing was under way, so their starts did not wait.
   */
  private SandboxPool filledPoolOfTwo(FailingStarts starts, Foreground foreground) {
    SandboxPool pool = newPool(starts, 2, Executors.newCachedThreadPool(), foreground);
    await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() == 2);
    return pool;
  }

  /** A pool whose starts the test holds and releases; closing lets every start go on first. */
  private record Held(HeldStarts starts, SandboxPool pool) implements AutoCloseable {
    @Override
    public void close() {
      starts.releaseAll();
      pool.close();
    }
  }

  /** A pool of {@code size} on {@code refiller}, whose starts are {@code starts}. */
  private Held held(HeldStarts starts, int size, ExecutorService refiller) {
    return new Held(starts, newPool(starts, size, refiller));
  }

  /**
   * A pool of one whose first sandbox was started and taken ("a"): the take's refill, the second
   * start, is held, so the pool stays empty.
   */
  private Held drained(HeldStarts starts, ExecutorService refiller) {
    Held held = held(starts, 1, refiller);
    starts.release(1);
    await().atMost(Duration.ofSeconds(30)).until(() -> held.pool().idle() == 1);
    assertThat(held.pool().take(session("a"))).isNotNull();
    starts.awaitStarted(2);
    return held;
  }

  /** A take on a thread of its own (the common pool may have only one). */
  private CompletableFuture<@Nullable Sandbox> takeAside(SandboxPool pool, String id) {
    return CompletableFuture.supplyAsync(() -> pool.take(session(id)), takers);
  }

  private SandboxSpec session(String id) {
    return SandboxShape.pooled().spec(id, "inst", "img", slots.resolve("ws-" + id));
  }

  private SandboxPool pool(Function<SandboxSpec, Sandbox> starter) {
    return newPool(starter, 1, Executors.newSingleThreadExecutor());
  }

  @AfterEach
  void stopTakers() {
    takers.shutdownNow();
  }

  private SandboxPool newPool(
      Function<SandboxSpec, Sandbox> starter, int size, ExecutorService refiller) {
    return newPool(starter, size, refiller, new Foreground());
  }

  private SandboxPool newPool(
      Function<SandboxSpec, Sandbox> starter,
      int size,
      ExecutorService refiller,
      Foreground foreground) {
    return new SandboxPool(
        SandboxShape.pooled(),
        size,
        "inst",
        "img",
        new SandboxPool.Slots() {
          @Override
          public Path create(String name) throws IOException {
            return Files.createDirectories(slots.resolve(name));
          }

          @Override
          public void bind(Path slot, Path workspace) {}

          @Override
          public void release(Path slot, boolean bound) {}

          @Override
          public void close() {}
        },
        spec -> true,
        starter,
        refiller,
        // Longer than any test: a take that waits when it should not hangs its test.
        Duration.ofMinutes(10),
        foreground);
  }

  /**
   * Starts stand-in sandboxes, failing the first {@code failures} starts as an engine that is not
   * there yet would; counts every start.
   */
  private static final class FailingStarts implements Function<SandboxSpec, Sandbox> {
    private final int failures;
    private final AtomicInteger starts = new AtomicInteger();

    FailingStarts(int failures) {
      this.failures = failures;
    }

    @Override
    public Sandbox apply(SandboxSpec spec) {
      if (starts.incrementAndGet() <= failures) {
        throw new IllegalStateException("the engine is not there");
      }
      return new Idle(spec.sandboxName(), new AtomicBoolean(true));
    }

    int count() {
      return starts.get();
    }
  }

  /**
   * Starts stand-in sandboxes, each held until the test releases it; the first {@code failures}
   * released starts fail, as an engine that went away would.
   */
  private static final class HeldStarts implements Function<SandboxSpec, Sandbox> {
    private final int failures;
    private final Semaphore releases = new Semaphore(0);
    private final AtomicInteger begun = new AtomicInteger();
    private final AtomicInteger ended = new AtomicInteger();
    private final Queue<Sandbox> made = new ConcurrentLinkedQueue<>();

    HeldStarts(int failures) {
      this.failures = failures;
    }

    @Override
    public Sandbox apply(SandboxSpec spec) {
      begun.incrementAndGet();
      releases.acquireUninterruptibly();
      if (ended.incrementAndGet() <= failures) {
        throw new IllegalStateException("the engine went away");
      }
      Idle sandbox = new Idle(spec.sandboxName(), new AtomicBoolean(true));
      made.add(sandbox);
      return sandbox;
    }

    /** The sandboxes started so far, in the order their starts ended. */
    List<Sandbox> made() {
      return List.copyOf(made);
    }

    void release(int count) {
      releases.release(count);
    }

    /** Lets every start, held or to come, go on: the pool can close. */
    void releaseAll() {
      releases.release(1000);
    }

    /** Waits until the {@code count}th start has begun. */
    void awaitStarted(int count) {
      await().atMost(Duration.ofSeconds(30)).until(() -> begun.get() >= count);
    }
  }

  /** A sandbox that is alive until destroyed and runs nothing. */
  private record Idle(String id, AtomicBoolean alive) implements Sandbox {
    @Override
    public boolean isAlive() {
      return alive.get();
    }

    @Override
    public SandboxProcess spawn(ProcessSpec spec) {
      throw new UnsupportedOperationException("runs nothing");
    }

    @Override
    public void destroy() {
      alive.set(false);
    }
  }
}
