package dev.box.sandbox;

import dev.box.api.time.Ticker;
import dev.box.core.backend.Foreground;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.function.Function;

/**
 * The clock and the threads a backend runs on, and the server's client work it defers to. The
 * composition root chooses them ({@link #system(Foreground)} in the server), never a backend
 * itself: tests hand in a fake ticker or threads they record, and several servers in one JVM each
 * own theirs.
 *
 * @param ticker the clock of the backend's timeouts, probes and waits
 * @param threads makes the platform threads of the backend's executors, given the name of their use
 * @param foreground the server's creates and execs under way, which the backend's work that nobody
 *     waits for (a pool's refill) waits to be over
 */
public record BackendRuntime(
    Ticker ticker, Function<String, ThreadFactory> threads, Foreground foreground) {

  /** This JVM's ticker and daemon platform threads named after their use, beside no server. */
  public static BackendRuntime system() {
    return system(new Foreground());
  }

  /**
   * This JVM's ticker and daemon platform threads named after their use, beside the server whose
   * client work is {@code foreground}.
   */
  public static BackendRuntime system(Foreground foreground) {
    return new BackendRuntime(
        Ticker.system(), name -> Thread.ofPlatform().name(name).daemon().factory(), foreground);
  }

  /**
   * One thread that lives until the executor is shut down. A jail's parent-death signal follows the
   * thread that forked it, so whatever forks jails must be such a thread, never one that may
   * retire.
   */
  public ExecutorService singleThread(String name) {
    return Executors.newSingleThreadExecutor(threads.apply(name));
  }

  /**
   * Platform threads made when needed and ended when idle: for blocking pipe reads, which would pin
   * a virtual thread's carrier.
   */
  public ExecutorService cachedThreads(String name) {
    return Executors.newCachedThreadPool(threads.apply(name));
  }

  /**
   * One thread that runs deadlines, such as those of exec agent links; its owner shuts it down when
   * it closes, so that no two owners share a timer.
   */
  public ScheduledExecutorService timer(String name) {
    return Executors.newSingleThreadScheduledExecutor(threads.apply(name));
  }
}
