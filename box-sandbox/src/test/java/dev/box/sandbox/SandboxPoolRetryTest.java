package dev.box.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pre-start that fails is tried again a few times before the pool waits for the next take. The
 * sandboxes here are stand-ins that run nothing: what is checked is the pool's bookkeeping, which
 * the real backends' pool suite ({@link PooledBackendSuite}) cannot make fail on demand.
 */
class SandboxPoolRetryTest {
  @TempDir Path slots;

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

  private SandboxPool pool(FailingStarts starter) {
    return new SandboxPool(
        SandboxShape.pooled(),
        1,
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
        Executors.newSingleThreadExecutor());
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
