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
    AtomicInteger starts = new AtomicInteger();
    try (SandboxPool pool =
        pool(
            spec -> {
              if (starts.incrementAndGet() <= 2) {
                throw new IllegalStateException("the engine is busy");
              }
              return new Idle(spec.sandboxName());
            })) {
      await().atMost(Duration.ofSeconds(30)).until(() -> pool.idle() == 1);
      assertThat(starts.get()).isEqualTo(3);
    }
  }

  @Test
  void aPreStartThatKeepsFailing_isTriedFourTimes_thenWaitsForTheNextTake() {
    AtomicInteger starts = new AtomicInteger();
    try (SandboxPool pool =
        pool(
            spec -> {
              starts.incrementAndGet();
              throw new IllegalStateException("no engine");
            })) {
      await().atMost(Duration.ofSeconds(30)).until(() -> starts.get() == 4);
      await()
          .during(Duration.ofSeconds(5))
          .atMost(Duration.ofSeconds(6))
          .until(() -> starts.get() == 4);
      assertThat(pool.idle()).isZero();
    }
  }

  private SandboxPool pool(Function<SandboxSpec, Sandbox> starter) {
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

  /** A sandbox that is alive until destroyed and runs nothing. */
  private static final class Idle implements Sandbox {
    private final String id;
    private volatile boolean alive = true;

    Idle(String id) {
      this.id = id;
    }

    @Override
    public String id() {
      return id;
    }

    @Override
    public boolean isAlive() {
      return alive;
    }

    @Override
    public SandboxProcess spawn(ProcessSpec spec) {
      throw new UnsupportedOperationException("runs nothing");
    }

    @Override
    public void destroy() {
      alive = false;
    }
  }
}
