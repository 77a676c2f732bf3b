package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.core.backend.SandboxUsage;

/**
 * A container's usage from the engine's {@code GET
 * /containers/{id}/stats?stream=false&one-shot=true}: {@code cpu_stats.cpu_usage.total_usage}
 * (nanoseconds), {@code memory_stats.usage} and the page cache within it ({@code stats.file} on
 * cgroup v2, {@code total_cache} or {@code cache} on v1). Where the engine tells no cache apart,
 * the memory is the usage with its cache.
 */
final class ContainerStats {
  private ContainerStats() {}

  /** The usage {@code stats} tells; what it lacks is unmeasured. */
  static SandboxUsage usage(JsonNode stats) {
    long cpu = counter(stats.path("cpu_stats").path("cpu_usage").path("total_usage"));
    JsonNode memory = stats.path("memory_stats");
    long used = counter(memory.path("usage"));
    long cache = SandboxUsage.UNMEASURED;
    for (String field : new String[] {"file", "total_cache", "cache"}) {
      if (cache < 0) {
        cache = counter(memory.path("stats").path(field));
      }
    }
    if (used < 0) {
      return new SandboxUsage(cpu, SandboxUsage.UNMEASURED, SandboxUsage.UNMEASURED);
    }
    return cache < 0
        ? new SandboxUsage(cpu, used, SandboxUsage.UNMEASURED)
        : new SandboxUsage(cpu, Math.max(0, used - cache), Math.min(cache, used));
  }

  private static long counter(JsonNode node) {
    return node.isIntegralNumber() && node.asLong() >= 0 ? node.asLong() : SandboxUsage.UNMEASURED;
  }
}
