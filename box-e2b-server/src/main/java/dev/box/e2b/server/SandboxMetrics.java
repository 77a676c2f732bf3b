package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxSpec;
import dev.box.core.backend.SandboxUsage;
import dev.box.core.session.SessionManager;
import dev.box.core.session.SessionUsage;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * E2B's {@code SandboxMetric} of a sandbox, measured now from its session's usage: {@code cpuCount}
 * and {@code memTotal} are the session's limits, {@code memUsed}, {@code memCache} and the CPU time
 * behind {@code cpuUsedPct} what the backend measures, {@code diskUsed} and {@code diskTotal} its
 * workspace. What the backend cannot measure is 0.
 *
 * <p>{@code cpuUsedPct} is the CPU time used since the sandbox's previous measure (at the first,
 * since its session started) as a share of {@code cpuCount} cores, so it needs the previous sample:
 * one is kept per sandbox, and dropped with the sandbox. Thread-safe.
 */
final class SandboxMetrics {
  private static final long MIB = 1024 * 1024;

  private final SessionManager sessions;
  private final ObjectMapper mapper;
  private final Map<String, Sample> samples = new ConcurrentHashMap<>();

  /** The CPU time a sandbox had used at one moment. */
  private record Sample(Instant at, long cpuNanos) {}

  SandboxMetrics(SessionManager sessions, ObjectMapper mapper) {
    this.sessions = sessions;
    this.mapper = mapper;
  }

  /** The metric of {@code sandbox} now. */
  ObjectNode measure(E2bSandbox sandbox) {
    SessionUsage usage = sessions.usage(sandbox.sessionId());
    SandboxUsage used = usage.sandbox();
    int cpuCount = cpuCount(sandbox.spec());
    Sample now = new Sample(usage.at(), used.cpuNanos());
    Sample before =
        samples.getOrDefault(
            sandbox.sandboxId(), new Sample(sessions.get(sandbox.sessionId()).createdAt(), 0));
    if (now.cpuNanos() >= 0) {
      samples.put(sandbox.sandboxId(), now);
    }
    ObjectNode metric = mapper.createObjectNode();
    metric.put("timestamp", usage.at().toString());
    metric.put("timestampUnix", usage.at().getEpochSecond());
    metric.put("cpuCount", cpuCount);
    metric.put("cpuUsedPct", cpuPercent(before, now, cpuCount));
    metric.put("memUsed", measured(used.memoryBytes()));
    metric.put("memCache", measured(used.cacheBytes()));
    metric.put("memTotal", memoryTotal(sandbox.spec()));
    metric.put("diskUsed", measured(usage.diskUsedBytes()));
    metric.put("diskTotal", measured(usage.diskTotalBytes()));
    return metric;
  }

  /** Forgets the samples of every sandbox but those of {@code live}. */
  void retain(Collection<E2bSandbox> live) {
    samples.keySet().retainAll(live.stream().map(E2bSandbox::sandboxId).toList());
  }

  /** The cores of the session's quota, rounded up; the host's when it has none. */
  static int cpuCount(BoxSpec spec) {
    return spec.cpus() > 0
        ? (int) Math.ceil(spec.cpus())
        : Runtime.getRuntime().availableProcessors();
  }

  private static long memoryTotal(BoxSpec spec) {
    return spec.memoryMb() > 0 ? spec.memoryMb() * MIB : 0;
  }

  /**
   * The CPU time between two samples as a percentage of {@code cores} for the time between them,
   * rounded to hundredths; 0 when either is unmeasured, or the counter went back (the sandbox was
   * started again).
   */
  static double cpuPercent(Sample before, Sample now, int cores) {
    long wall = Duration.between(before.at(), now.at()).toNanos();
    long cpu = now.cpuNanos() - before.cpuNanos();
    if (wall <= 0 || before.cpuNanos() < 0 || now.cpuNanos() < 0 || cpu < 0) {
      return 0;
    }
    double percent = 100.0 * cpu / ((double) wall * cores);
    return Math.round(Math.min(100, percent) * 100) / 100.0;
  }

  private static long measured(long value) {
    return Math.max(0, value);
  }
}
