package dev.box.sandbox;

import dev.box.core.backend.Foreground;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandboxes of one {@link SandboxShape} started before any session asks for them. A request of
 * exactly that shape takes one and has its workspace bound into it ({@link WorkspaceSlots}); one of
 * any other shape never does. At most {@code size} sandboxes wait. The pool refills at startup and
 * after each take, with as many starts at once as takes leave room for, up to the host's cores
 * ({@link #parallel}). {@link #close} destroys every waiting sandbox.
 *
 * <p>A take that finds none waiting adds one start to the pool's and waits for the first of them to
 * end, where it used to start a sandbox of its own: the pool starts as many sandboxes as before,
 * but a caller waits only for what is left of the start closest to its end instead of a whole
 * start, and no start is lost to the pool. This is what bounds the cold path's tail when creates
 * come back to back and drain the pool. While the pool's starts fail, a take does not wait.
 *
 * <p>While a sandbox still waits for the next take, the start that replaces a taken one begins once
 * the server's creates and execs under way are over ({@link Foreground}, a tenth of a second at
 * most), so that it does not take the cores from the create that took the sandbox; a pool that no
 * sandbox waits in starts at once.
 *
 * <p>Every backend that pre-starts sandboxes uses this pool; they differ in how a workspace reaches
 * a running sandbox ({@link Slots}) and in what of a spec, beyond its shape, they must also check
 * ({@code accepts}).
 *
 * <p>Thread-safe. Starting a sandbox happens on the refill threads only, never while the lock is
 * held.
 */
public final class SandboxPool implements AutoCloseable {
  /** How often a failed pre-start is tried again before the pool waits for the next take. */
  private static final int MAX_RETRIES = 3;

  /**
   * How long a take waits at most for a sandbox the pool is starting: a guard against a start that
   * hangs, since a start of the caller's own would take as long as the pool's (a container's takes
   * seconds on a loaded host).
   */
  public static final Duration WAIT_FOR_START = Duration.ofSeconds(30);

  private static final Logger log = LoggerFactory.getLogger(SandboxPool.class);

  private final SandboxShape shape;
  private final int size;
  private final String instanceId;
  private final String image;
  private final Slots slots;
  private final Predicate<SandboxSpec> accepts;
  private final Function<SandboxSpec, Sandbox> starter;
  private final ExecutorService refiller;
  private final int parallel;
  private final Duration waitForStart;
  private final Foreground foreground;
  private final Object pauses = new Object();
  private final Deque<PooledSandbox> idle = new ArrayDeque<>();
  private final AtomicLong sequence = new AtomicLong();
  private final AtomicLong taken = new AtomicLong();
  private final AtomicLong generation = new AtomicLong();
  private volatile boolean open = true;

  /** Fills submitted to the refill threads and not ended; guarded by {@code this}. */
  private int fills;

  /** Starts under way; guarded by {@code this}. */
  private int starting;

  /** Takes waiting for a start under way; guarded by {@code this}. */
  private int waiting;

  /** Fills pausing after a failed start; guarded by {@code this}. */
  private int pausing;

  /** Whether the last start that ended failed; guarded by {@code this}. */
  private boolean failing;

  /**
   * How a session's workspace reaches a sandbox that already runs: each pre-started sandbox binds a
   * slot of its own at its workspace path.
   */
  public interface Slots {
    /** A new empty slot named {@code name}: the host directory a pre-started sandbox binds. */
    Path create(String name) throws IOException;

    /** Makes {@code workspace} what the sandbox of {@code slot} sees at its workspace path. */
    void bind(Path slot, Path workspace) throws IOException;

    /**
     * Makes {@code workspace} what the running {@code sandbox}, whose slot is {@code slot}, sees at
     * its workspace path; by default {@link #bind(Path, Path)} of its host path.
     */
    default void bind(Sandbox sandbox, Path slot, SandboxMount workspace) throws IOException {
      bind(slot, workspace.hostPath());
    }

    /**
     * Undoes {@link #bind} (when {@code bound}) and removes the slot; failures are logged, and a
     * session's workspace is never deleted.
     */
    void release(Path slot, boolean bound);

    /** Ends what the slots run (a mounter) and removes this instance's slots that are left. */
    void close();
  }

  /**
   * A pool that starts filling at once.
   *
   * @param shape the one shape it serves
   * @param size how many sandboxes wait at most; above 0
   * @param instanceId the server instance, whose sandboxes the pool's are
   * @param image the image of the pre-started sandboxes' specs
   * @param slots the workspace slots
   * @param accepts what a spec of the pool's shape must also satisfy to take a sandbox
   * @param starter starts one sandbox of a spec, as the backend does for a session
   * @param refiller the threads that start the pool's sandboxes, at least {@link #parallel} of them
   *     (fewer only queue the starts); the pool shuts it down
   * @param waitForStart how long a take waits at most for a start ({@link #WAIT_FOR_START})
   * @param foreground the server's client work: while a sandbox still waits, a start begins once
   *     that is over ({@link Foreground#awaitQuiet}), so that the create which took a sandbox is
   *     not slowed down by the start that replaces it
   */
  public SandboxPool(
      SandboxShape shape,
      int size,
      String instanceId,
      String image,
      Slots slots,
      Predicate<SandboxSpec> accepts,
      Function<SandboxSpec, Sandbox> starter,
      ExecutorService refiller,
      Duration waitForStart,
      Foreground foreground) {
    if (size <= 0) {
      throw new IllegalArgumentException("pool_size must be above 0 for a pool: " + size);
    }
    this.shape = shape;
    this.size = size;
    this.instanceId = instanceId;
    this.image = image;
    this.slots = slots;
    this.accepts = accepts;
    this.starter = starter;
    this.refiller = refiller;
    this.waitForStart = waitForStart;
    this.foreground = foreground;
    this.parallel = parallel(size);
    refill();
  }

  /**
   * How many sandboxes a pool of {@code size} starts at once at most: {@code size}, and no more
   * than the host's cores, which starts beyond that would only share.
   */
  public static int parallel(int size) {
    return Math.max(1, Math.min(size, Runtime.getRuntime().availableProcessors()));
  }

  /** The shape the pool serves. */
  public SandboxShape shape() {
    return shape;
  }

  /** How many sandboxes wait at most. */
  public int size() {
    return size;
  }

  /** How many sandboxes wait now. */
  public synchronized int idle() {
    return idle.size();
  }

  /** How many takes wait for a sandbox the pool is starting. */
  synchronized int waiting() {
    return waiting;
  }

  /** How many sandboxes sessions have taken from the pool so far. */
  public long taken() {
    return taken.get();
  }

  /**
   * A waiting sandbox with {@code spec}'s workspace bound in it, or null when {@code spec} is not
   * of the pool's shape, none waits, or binding failed (then the caller starts one as usual). The
   * caller has checked the workspace ({@link dev.box.core.backend.MountOwnership}).
   */
  public @Nullable Sandbox take(SandboxSpec spec) {
    SandboxMount workspace = spec.workspace();
    if (!open || workspace == null || !serves(spec)) {
      return null;
    }
    PooledSandbox sandbox = pollAlive();
    try {
      if (sandbox == null) {
        return null;
      }
      try {
        slots.bind(sandbox.sandbox(), sandbox.slot(), workspace);
        sandbox.bound().set(true);
      } catch (IOException e) {
        log.warn(
            "cannot bind the workspace of session {} into a pre-started sandbox: {}",
            spec.sessionId(),
            e.getMessage());
        sandbox.destroy();
        return null;
      }
      taken.incrementAndGet();
      log.debug("session {} takes pre-started sandbox {}", spec.sessionId(), sandbox.id());
      return sandbox;
    } finally {
      refill();
    }
  }

  /** Whether {@code spec} is of the pool's shape and the backend accepts it for a pooled one. */
  public boolean serves(SandboxSpec spec) {
    return spec.workspace() != null && shape.equals(SandboxShape.of(spec)) && accepts.test(spec);
  }

  private @Nullable PooledSandbox pollAlive() {
    while (true) {
      PooledSandbox next = pollOrWait();
      if (next == null || next.isAlive()) {
        return next;
      }
      next.destroy();
    }
  }

  /**
   * The first waiting sandbox; when none waits, one more start for the pool and the first sandbox
   * its starts bring, waiting {@code waitForStart} at most; null when none comes by then, or when
   * the pool's starts fail.
   */
  private synchronized @Nullable PooledSandbox pollOrWait() {
    PooledSandbox next = idle.pollFirst();
    if (next != null || !open || failing) {
      return next;
    }
    waiting++;
    try {
      refill();
      long deadline = System.nanoTime() + waitForStart.toNanos();
      long left = waitForStart.toNanos();
      while (open && idle.isEmpty() && !failing && (starting > 0 || fills > pausing) && left > 0) {
        TimeUnit.NANOSECONDS.timedWait(this, left);
        left = deadline - System.nanoTime();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      waiting--;
    }
    return idle.pollFirst();
  }

  /** {@link #pause}, counted in {@link #pausing}: takes do not wait for a fill that pauses. */
  private boolean pauseAfterFailure(Duration time) {
    synchronized (this) {
      pausing++;
      notifyAll();
    }
    try {
      return pause(time);
    } finally {
      synchronized (this) {
        pausing--;
      }
    }
  }

  /**
   * Waits {@code time} on a refill thread, or less when the pool closes: whether it is still open.
   */
  private boolean pause(Duration time) {
    synchronized (pauses) {
      try {
        if (open) {
          pauses.wait(time.toMillis());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return open;
  }

  /**
   * Submits one more fill, unless {@link #parallel} run already and one more for each take that
   * waits (each fill starts another sandbox while the pool lacks one), or the pool will have what
   * it wants without it.
   */
  private void refill() {
    synchronized (this) {
      if (!open || fills >= parallel + waiting || idle.size() + starting >= wanted()) {
        return;
      }
      fills++;
    }
    try {
      refiller.execute(this::fill);
    } catch (RejectedExecutionException e) {
      // Closed meanwhile: nothing to fill.
      ended();
    }
  }

  /**
   * Before a start that the next take can do without: while a sandbox still waits for that take,
   * the start waits until the server's client work is over (the create that took the sandbox it
   * replaces), as long as the foreground lets it at most. Once none waits, or a take waits for a
   * start, or the pool closes, it goes on at once. False when the thread is interrupted.
   */
  private boolean deferStart() {
    synchronized (this) {
      if (!open || idle.size() + starting >= wanted()) {
        return true;
      }
    }
    try {
      foreground.awaitQuiet(this::startNow);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Whether a start must begin now: no sandbox waits, a take waits, or the pool closes. */
  private synchronized boolean startNow() {
    return idle.isEmpty() || waiting > 0 || !open;
  }

  /** How many sandboxes the pool wants waiting or starting: its size, and one per waiting take. */
  private int wanted() {
    return size + waiting;
  }

  /** A fill ended: the takes that wait for a start see whether one is still under way. */
  private synchronized void ended() {
    fills--;
    notifyAll();
  }

  /**
   * Starts sandboxes, one at a time, while the pool lacks one that no other fill starts. Whether to
   * start another and the fill's end are decided under the lock, with {@link #refill}'s check, so
   * that no take's refill is lost between them.
   */
  private void fill() {
    boolean ended = false;
    try {
      int failures = 0;
      while (true) {
        if (!deferStart()) {
          return;
        }
        long startedIn;
        synchronized (this) {
          if (!open || idle.size() + starting >= wanted()) {
            ended = true;
            ended();
            return;
          }
          starting++;
          startedIn = generation.get();
        }
        PooledSandbox started = null;
        boolean kept = false;
        try {
          started = startOne();
        } catch (IOException | RuntimeException e) {
          log.warn("cannot pre-start a sandbox: {}", e.getMessage());
        } finally {
          synchronized (this) {
            starting--;
            failing = started == null;
            // Beyond what the pool wants (the takes it started one for got one already): dropped.
            if (started != null
                && open
                && startedIn == generation.get()
                && idle.size() < wanted()) {
              idle.addLast(started);
              kept = true;
            }
            notifyAll();
          }
        }
        if (started == null) {
          // A passing failure (an engine busy for a moment) is tried again a few times, a second
          // apart more each time; then until the next take: a host that cannot start one would
          // fail again at once.
          if (++failures > MAX_RETRIES || !pauseAfterFailure(Duration.ofSeconds(failures))) {
            return;
          }
          continue;
        }
        failures = 0;
        if (!kept) {
          started.destroy();
        }
      }
    } finally {
      if (!ended) {
        ended();
      }
    }
  }

  /** Starts one sandbox of the pool's shape in a new slot. */
  private PooledSandbox startOne() throws IOException {
    String name = instanceId + "_pool-" + sequence.incrementAndGet();
    Path slot = slots.create(name);
    try {
      return new PooledSandbox(
          starter.apply(shape.spec(name, instanceId, image, slot)),
          slot,
          slots,
          new AtomicBoolean());
    } catch (RuntimeException e) {
      slots.release(slot, false);
      throw e;
    }
  }

  /**
   * Destroys every waiting sandbox and starts new ones: the backend's settings that shape a sandbox
   * beyond its spec (a container's CPU quota) changed, and a sandbox started before must not be
   * served. A start under way is dropped when it ends.
   */
  public void drain() {
    generation.incrementAndGet();
    destroyIdle();
    refill();
  }

  /**
   * Stops refilling, waits for a start under way, and destroys every waiting sandbox; those taken
   * are their sessions' to destroy.
   */
  @Override
  public void close() {
    open = false;
    synchronized (pauses) {
      pauses.notifyAll();
    }
    synchronized (this) {
      notifyAll();
    }
    refiller.shutdown();
    try {
      if (!refiller.awaitTermination(30, TimeUnit.SECONDS)) {
        log.warn("a sandbox start of the pool did not end within 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    destroyIdle();
  }

  /** Destroys every waiting sandbox, one at a time outside the lock. */
  private void destroyIdle() {
    while (true) {
      PooledSandbox next;
      synchronized (this) {
        next = idle.pollFirst();
      }
      if (next == null) {
        return;
      }
      next.destroy();
    }
  }
}
