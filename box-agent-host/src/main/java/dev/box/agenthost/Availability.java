package dev.box.agenthost;

import dev.box.api.BoxBackendHealth;
import dev.box.client.Sleeper;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the Box server can run sandboxes now, kept up to date as the reference keeps it: while
 * connected, a heartbeat probes the server every {@link #HEARTBEAT_INTERVAL}, and after {@link
 * #HEARTBEAT_FAILURES} failures in a row the server counts as disconnected ({@value
 * #DISCONNECTED}); while disconnected, it reconnects with {@linkplain Backoff#RECONNECT exponential
 * backoff} (3 s, 6 s, ... at most 60 s) until a probe succeeds.
 *
 * <p>{@link #run()} is the loop; {@link AgentHost} runs it on a virtual thread. Time comes from an
 * injected {@link Sleeper}, so tests drive the loop with fake time. Thread-safe.
 */
public final class Availability {
  /** How often the heartbeat probes a connected server (the reference's 20 s). */
  public static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(20);

  /** How many failed heartbeats in a row mean disconnected (the reference's 3). */
  public static final int HEARTBEAT_FAILURES = 3;

  /** The connector error while disconnected. */
  public static final String DISCONNECTED = "Disconnected from Box runtime";

  private static final Logger log = LoggerFactory.getLogger(Availability.class);

  /** Asks the server for its backend's health; throws when it cannot be reached. */
  @FunctionalInterface
  public interface Probe {
    /** The backend's health now. */
    BoxBackendHealth probe();
  }

  /** Told when the server's reachability changes; runs on the loop's thread. */
  public interface Listener {
    /** The server answered after being unreachable (or for the first time). */
    default void connected() {}

    /** The server stopped answering, with the error the status shows. */
    default void disconnected(String reason) {}

    /** One probe failed. */
    default void probeFailed(RuntimeException failure) {}
  }

  private final Probe probe;
  private final Sleeper sleeper;
  private final Backoff backoff;
  private final Listener listener;
  private volatile boolean connected;
  private volatile @Nullable BoxBackendHealth backend;
  private volatile @Nullable String connectorError = "Not connected to Box runtime yet";

  /** An availability that probes with {@code probe} and waits on {@code sleeper}. */
  public Availability(Probe probe, Sleeper sleeper, Backoff backoff, Listener listener) {
    this.probe = probe;
    this.sleeper = sleeper;
    this.backoff = backoff;
    this.listener = listener;
  }

  /** Whether the server is connected and its backend can run sandboxes. */
  public boolean available() {
    BoxBackendHealth health = backend;
    return connected && health != null && health.available();
  }

  /** Whether the server answered the last probes. */
  public boolean connected() {
    return connected;
  }

  /** The backend's health at the last successful probe, or null before one. */
  public @Nullable BoxBackendHealth backend() {
    return backend;
  }

  /**
   * Why sandboxes cannot run, or null when they can: disconnected, never connected, or the backend
   * unavailable.
   */
  public @Nullable String connectorError() {
    BoxBackendHealth health = backend;
    if (connected && health != null && !health.available()) {
      return health.name() == null
          ? "No supported sandbox backend is available"
          : "Configured sandbox backend \"" + health.name() + "\" is unavailable";
    }
    return connected ? null : connectorError;
  }

  /**
   * Probes once now and updates the state: success connects, failure while disconnected keeps it so
   * (a failure while connected counts only in the heartbeat).
   *
   * @return whether the probe succeeded
   */
  public boolean probeNow() {
    try {
      backend = probe.probe();
      if (!connected) {
        connected = true;
        connectorError = null;
        listener.connected();
      }
      return true;
    } catch (RuntimeException e) {
      listener.probeFailed(e);
      if (!connected && !DISCONNECTED.equals(connectorError)) {
        connectorError = "Cannot reach Box runtime: " + e.getMessage();
      }
      return false;
    }
  }

  /**
   * Connects (with backoff), then heartbeats, reconnecting after a disconnect, until the thread is
   * interrupted or the sleeper throws {@link InterruptedException}.
   */
  public void run() {
    try {
      while (!Thread.currentThread().isInterrupted()) {
        reconnect();
        heartbeat();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Probes with backoff until a probe succeeds. */
  private void reconnect() throws InterruptedException {
    for (int attempt = 0; !probeNow(); attempt++) {
      sleeper.sleep(backoff.delay(attempt));
    }
  }

  /** Probes every interval while connected; returns once disconnected. */
  private void heartbeat() throws InterruptedException {
    int failures = 0;
    while (true) {
      sleeper.sleep(HEARTBEAT_INTERVAL);
      try {
        backend = probe.probe();
        failures = 0;
      } catch (RuntimeException e) {
        listener.probeFailed(e);
        if (++failures >= HEARTBEAT_FAILURES) {
          connected = false;
          connectorError = DISCONNECTED;
          log.warn("{} after {} failed heartbeats: {}", DISCONNECTED, failures, e.getMessage());
          listener.disconnected(DISCONNECTED);
          return;
        }
      }
    }
  }
}
