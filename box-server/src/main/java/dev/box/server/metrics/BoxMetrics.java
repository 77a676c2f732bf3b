package dev.box.server.metrics;

import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.session.SessionListener;
import dev.box.core.session.SessionManager;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The metrics of one server, in a Prometheus registry of its own: what {@code GET /metrics} serves.
 * See docs/METRICS.md for every name.
 *
 * <p>Counters and histograms are fed by the runtime's {@link SessionListener} events (so execs from
 * the REST API and from LangBot's actions count alike) and by the relay; gauges are read from the
 * {@link SessionManager} when scraped. Every label value comes from a bounded set (backend names,
 * fixed outcomes and streams); never a session id or a command.
 *
 * <p>No JVM or system binders are registered: they would load and sample more than a sandbox
 * runtime's operator needs, and the server's idle footprint matters. Thread-safe.
 */
public final class BoxMetrics implements SessionListener {

  /** The content type of Prometheus' text format, the default answer. */
  public static final String TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

  /** The content type of OpenMetrics, answered when a scraper asks for it. */
  public static final String OPEN_METRICS =
      "application/openmetrics-text; version=1.0.0; charset=utf-8";

  /** Exec durations: a shell builtin in a warm sandbox takes milliseconds, a build minutes. */
  private static final Duration[] EXEC_BUCKETS =
      durations(5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000);

  /** Session starts: a pre-started sandbox takes milliseconds, an image pull minutes. */
  private static final Duration[] START_BUCKETS =
      durations(5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 120_000);

  private static final String BACKEND = "backend";

  private final Set<String> backendsSeen = ConcurrentHashMap.newKeySet();
  private final Set<String> poolsSeen = ConcurrentHashMap.newKeySet();
  private volatile @Nullable Bound bound;
  private volatile @Nullable Meters meters;

  /**
   * The registry and the relay's counters. Made by the first event or scrape, not with the server:
   * the metrics library loads some 200 classes, which a server that is never scraped and runs
   * nothing would keep in memory for nothing. Every series a scrape shows is registered when it is
   * made, in the order a registry made at start would have had, so scrapes answer the same.
   */
  private record Meters(
      PrometheusMeterRegistry registry, Counter relayStdin, Counter relayStdout) {}

  /** What {@link #bind} saw: the sessions and the backend selected then, with its pool or not. */
  private record Bound(SessionManager sessions, SandboxBackend backend, boolean pooled) {}

  /** Creates the metrics, empty; {@link #bind} adds the runtime's gauges. */
  public BoxMetrics() {}

  /**
   * Reads the gauges from {@code sessions} from now on, and registers every series of its backend
   * at zero, so that a scraper sees each one before its first event.
   */
  public void bind(SessionManager sessions) {
    SandboxBackend backend = sessions.backendChoice().backend();
    Bound first = new Bound(sessions, backend, backend.poolLevel() != null);
    synchronized (this) {
      bound = first;
      Meters made = meters;
      if (made != null) {
        registerRuntime(made.registry(), first);
      }
    }
  }

  /** The registry, made on first use with the series of {@link #bind}. */
  private Meters meters() {
    Meters made = meters;
    if (made != null) {
      return made;
    }
    synchronized (this) {
      made = meters;
      if (made == null) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        made =
            new Meters(registry, relayCounter(registry, "stdin"), relayCounter(registry, "stdout"));
        Bound first = bound;
        if (first != null) {
          registerRuntime(registry, first);
        }
        meters = made;
      }
      return made;
    }
  }

  private void registerRuntime(PrometheusMeterRegistry registry, Bound first) {
    Gauge.builder("box.sessions.active", first.sessions(), SessionManager::size)
        .description("Sessions that exist, those being started included")
        .strongReference(true)
        .register(registry);
    Gauge.builder("box.managed.processes.active", first.sessions(), s -> s.processes().running())
        .description("Managed processes running, all sessions together")
        .strongReference(true)
        .register(registry);
    observeBackends(registry, first.sessions(), first.backend(), first.pooled());
  }

  @Override
  public void execEnded(ExecEnded exec) {
    PrometheusMeterRegistry registry = meters().registry();
    String backend = exec.backend();
    execCounter(registry, backend, exec.end()).increment();
    if (exec.end() == ExecEnd.ERROR) {
      return;
    }
    execTimer(registry, backend).record(exec.duration());
    if (exec.end() == ExecEnd.TIMEOUT) {
      timeoutCounter(registry, backend).increment();
    }
    if (exec.stdoutTruncated()) {
      truncatedCounter(registry, backend, "stdout").increment();
    }
    if (exec.stderrTruncated()) {
      truncatedCounter(registry, backend, "stderr").increment();
    }
  }

  @Override
  public void sessionStarted(String backend, boolean preStarted, Duration duration) {
    startTimer(meters().registry(), backend, preStarted).record(duration);
  }

  /** Counts {@code bytes} written from relay clients to managed processes' stdin. */
  public void relayedStdin(long bytes) {
    meters().relayStdin().increment(bytes);
  }

  /** Counts {@code bytes} of managed processes' stdout delivered to relay clients. */
  public void relayedStdout(long bytes) {
    meters().relayStdout().increment(bytes);
  }

  /** A scrape's answer: its content type and body. */
  public record Scrape(String contentType, String body) {}

  /**
   * The current values in OpenMetrics when {@code accept} asks for it, else in Prometheus' text
   * format 0.0.4 (never the protobuf format, whatever is asked).
   */
  public Scrape scrape(@Nullable String accept) {
    PrometheusMeterRegistry registry = meters().registry();
    Bound first = bound;
    if (first != null) {
      SandboxBackend current = first.sessions().backendChoice().backend();
      observeBackends(registry, first.sessions(), current, current.poolLevel() != null);
    }
    String type =
        accept != null && accept.contains("application/openmetrics-text")
            ? OPEN_METRICS
            : TEXT_FORMAT;
    return new Scrape(type, registry.scrape(type));
  }

  /**
   * Registers the series of each backend not seen before: the one in use (LangBot's {@code
   * box_init} may have switched it) and those selection passed over, which are unavailable.
   */
  private void observeBackends(
      PrometheusMeterRegistry registry,
      SessionManager bound,
      SandboxBackend current,
      boolean pooled) {
    String name = current.name();
    if (!name.equals(BackendStatus.NONE) && backendsSeen.add(name)) {
      for (ExecEnd end : ExecEnd.values()) {
        execCounter(registry, name, end);
      }
      execTimer(registry, name);
      timeoutCounter(registry, name);
      truncatedCounter(registry, name, "stdout");
      truncatedCounter(registry, name, "stderr");
      startTimer(registry, name, false);
      availabilityGauge(registry, bound, name);
    }
    for (String other : bound.backendChoice().notChosen().keySet()) {
      if (backendsSeen.add(other)) {
        availabilityGauge(registry, bound, other);
      }
    }
    if (pooled && poolsSeen.add(name)) {
      startTimer(registry, name, true);
      poolGauge(
          registry,
          bound,
          "box.pool.idle",
          "Pre-started sandboxes waiting for a session",
          name,
          PoolLevel::idle);
      poolGauge(
          registry,
          bound,
          "box.pool.size",
          "Pre-started sandboxes kept waiting at most (pool_size)",
          name,
          PoolLevel::size);
    }
  }

  private static void availabilityGauge(
      PrometheusMeterRegistry registry, SessionManager bound, String backend) {
    Gauge.builder(
            "box.backend.available",
            () -> {
              SandboxBackend current = bound.backendChoice().backend();
              return current.name().equals(backend) && current.status().available() ? 1 : 0;
            })
        .description("1 when the backend serves sessions now, else 0 (not in use, or unavailable)")
        .tag(BACKEND, backend)
        .strongReference(true)
        .register(registry);
  }

  private static void poolGauge(
      PrometheusMeterRegistry registry,
      SessionManager bound,
      String name,
      String description,
      String backend,
      ToIntFunction<PoolLevel> value) {
    Gauge.builder(
            name,
            () -> {
              SandboxBackend current = bound.backendChoice().backend();
              PoolLevel level = current.name().equals(backend) ? current.poolLevel() : null;
              return level == null ? 0 : value.applyAsInt(level);
            })
        .description(description)
        .tag(BACKEND, backend)
        .strongReference(true)
        .register(registry);
  }

  private static Counter execCounter(
      PrometheusMeterRegistry registry, String backend, ExecEnd end) {
    return Counter.builder("box.exec")
        .description("Execs by how they ended: ok, nonzero (exit code), timeout, error (no result)")
        .tag(BACKEND, backend)
        .tag("outcome", end.label())
        .register(registry);
  }

  private static Timer execTimer(PrometheusMeterRegistry registry, String backend) {
    return Timer.builder("box.exec.duration")
        .description("Execs that produced a result, from request to result")
        .tag(BACKEND, backend)
        .serviceLevelObjectives(EXEC_BUCKETS)
        .register(registry);
  }

  private static Counter timeoutCounter(PrometheusMeterRegistry registry, String backend) {
    return Counter.builder("box.exec.timeouts")
        .description("Execs whose command was killed at its timeout")
        .tag(BACKEND, backend)
        .register(registry);
  }

  private static Counter truncatedCounter(
      PrometheusMeterRegistry registry, String backend, String stream) {
    return Counter.builder("box.exec.output.truncated")
        .description("Execs whose stream exceeded max_output_bytes and was cut in the middle")
        .tag(BACKEND, backend)
        .tag("stream", stream)
        .register(registry);
  }

  private static Timer startTimer(
      PrometheusMeterRegistry registry, String backend, boolean preStarted) {
    return Timer.builder("box.session.create.duration")
        .description("Session sandbox starts, workspace included; pooled: a pre-started sandbox")
        .tag(BACKEND, backend)
        .tag("pooled", Boolean.toString(preStarted))
        .serviceLevelObjectives(START_BUCKETS)
        .register(registry);
  }

  private static Counter relayCounter(PrometheusMeterRegistry registry, String direction) {
    return Counter.builder("box.relay")
        .baseUnit("bytes")
        .description("Bytes relayed between WebSocket clients and managed processes")
        .tag("direction", direction)
        .register(registry);
  }

  private static Duration[] durations(long... millis) {
    Duration[] durations = new Duration[millis.length];
    for (int i = 0; i < millis.length; i++) {
      durations[i] = Duration.ofMillis(millis[i]);
    }
    return durations;
  }
}
