package dev.box.core.backend;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The work a client waits for, under way on this server: session creates and execs. Work that no
 * client waits for (starting a pool's next sandbox, making a spare workspace) waits for a quiet
 * moment before it takes the cores, so that it does not slow down the request that set it off; it
 * never waits longer than the time given here, so a busy server still refills.
 *
 * <p>A moment is quiet when nothing has been under way for {@link #SETTLE}: a client's create is
 * often followed at once by its first exec, and the gap between them is not quiet.
 *
 * <p>Thread-safe.
 */
public final class Foreground {
  /** How long nothing must have been under way for the server to count as quiet. */
  public static final Duration SETTLE = Duration.ofMillis(10);

  /** How long work nobody waits for defers to client work at most, each time it waits. */
  public static final Duration DEFER_AT_MOST = Duration.ofMillis(100);

  /** How often a wait looks again at its caller's reason to go on regardless. */
  private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private static final long SETTLE_NANOS = SETTLE.toNanos();

  private final long deferAtMostNanos;

  /** Work under way; guarded by {@code this}. */
  private int active;

  /** When the last work ended, in {@link System#nanoTime()}; guarded by {@code this}. */
  private long lastEnded;

  /** Whether any work has ended yet; guarded by {@code this}. */
  private boolean anyEnded;

  /** One piece of client work; {@link #close} ends it (once). */
  public interface Work extends AutoCloseable {
    @Override
    void close();
  }

  /** Client work that background work defers to for {@link #DEFER_AT_MOST} at most each time. */
  public Foreground() {
    this(DEFER_AT_MOST);
  }

  /** Client work that background work defers to for {@code deferAtMost} at most each time. */
  public Foreground(Duration deferAtMost) {
    this.deferAtMostNanos = deferAtMost.toNanos();
  }

  /** Begins one piece of work a client waits for; close what it returns when it ends. */
  public Work begin() {
    synchronized (this) {
      active++;
    }
    return new Work() {
      private boolean closed;

      @Override
      public void close() {
        synchronized (Foreground.this) {
          if (closed) {
            return;
          }
          closed = true;
          active--;
          lastEnded = System.nanoTime();
          anyEnded = true;
          Foreground.this.notifyAll();
        }
      }
    };
  }

  /** Whether client work is under way now. */
  public synchronized boolean busy() {
    return active > 0;
  }

  /**
   * Waits until the server is quiet, until the time this defers at most has passed, or until {@code
   * goOn} says to go on regardless (someone waits for the background work after all, or its owner
   * closes). {@code goOn} is asked without any lock of this class held, every few milliseconds.
   *
   * @return false when the wait ended because the time ran out
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public boolean awaitQuiet(BooleanSupplier goOn) throws InterruptedException {
    long deadline = System.nanoTime() + deferAtMostNanos;
    while (!goOn.getAsBoolean()) {
      synchronized (this) {
        long now = System.nanoTime();
        long sinceEnd = anyEnded ? now - lastEnded : SETTLE_NANOS;
        if (active == 0 && sinceEnd >= SETTLE_NANOS) {
          return true;
        }
        long left = deadline - now;
        if (left <= 0) {
          return false;
        }
        long settling = active == 0 ? SETTLE_NANOS - sinceEnd : RECHECK_NANOS;
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(Math.min(settling, RECHECK_NANOS), left));
      }
    }
    return true;
  }
}
