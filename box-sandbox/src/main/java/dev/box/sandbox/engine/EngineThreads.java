package dev.box.sandbox.engine;

import dev.box.sandbox.BackendRuntime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The threads that talk to one engine: request deadlines, the exec stream demultiplexers and the
 * exec exit pollers. {@link #close()} shuts them all down; until then an unused thread ends after
 * {@link #IDLE} on its own, so an owner that is never closed keeps no thread for long.
 *
 * @param deadlines closes connections whose deadline passed: a blocked read then fails
 * @param streams reads exec streams: one blocking thread per running exec
 * @param exits inspects execs until they have exited
 */
public record EngineThreads(
    ScheduledExecutorService deadlines, ExecutorService streams, ScheduledExecutorService exits)
    implements AutoCloseable {
  /** How long a thread waits for work before it ends. */
  public static final Duration IDLE = Duration.ofSeconds(60);

  /** Threads of {@code runtime} named {@code box-engine-deadline}, {@code box-container-*}. */
  public static EngineThreads of(BackendRuntime runtime) {
    return new EngineThreads(
        runtime.threads().apply("box-engine-deadline"),
        runtime.threads().apply("box-container-stream"),
        runtime.threads().apply("box-container-exit"));
  }

  /** Threads made by the given factories (tests record them). */
  public EngineThreads(ThreadFactory deadlines, ThreadFactory streams, ThreadFactory exits) {
    this(
        idling(new ScheduledThreadPoolExecutor(1, deadlines)),
        // Platform threads: they block on socket reads.
        Executors.newCachedThreadPool(streams),
        idling(new ScheduledThreadPoolExecutor(2, exits)));
  }

  private static ScheduledExecutorService idling(ScheduledThreadPoolExecutor pool) {
    pool.setKeepAliveTime(IDLE.toMillis(), TimeUnit.MILLISECONDS);
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * Shuts every pool down, interrupting what runs (a stream read then ends with its connection) and
   * dropping scheduled deadlines and polls; returns without waiting for the threads to end.
   */
  @Override
  public void close() {
    for (ExecutorService pool : List.of(deadlines, streams, exits)) {
      pool.shutdownNow();
    }
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return deadlines.isShutdown();
  }
}
