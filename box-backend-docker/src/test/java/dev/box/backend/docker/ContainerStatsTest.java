package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.core.backend.SandboxUsage;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The engine's one-shot stats read as a sandbox's usage, in the shapes Docker answers on cgroup v1
 * and v2 (taken from real answers, trimmed), and one that tells no memory.
 */
class ContainerStatsTest {

  private static SandboxUsage usageOf(String stats) throws IOException {
    return ContainerStats.usage(new ObjectMapper().readTree(stats));
  }

  @Test
  void cgroupV2_subtractsTheFileCache() throws IOException {
    assertThat(
            usageOf(
                """
                {"cpu_stats":{"cpu_usage":{"total_usage":81234000},"online_cpus":2},
                 "memory_stats":{"usage":5242880,"stats":{"anon":3145728,"file":2097152},
                                 "limit":268435456}}
                """))
        .isEqualTo(new SandboxUsage(81_234_000, 3_145_728, 2_097_152));
  }

  @Test
  void cgroupV1_subtractsTheTotalCache() throws IOException {
    assertThat(
            usageOf(
                """
                {"cpu_stats":{"cpu_usage":{"total_usage":5}},
                 "memory_stats":{"usage":1048576,"stats":{"cache":4096,"total_cache":8192}}}
                """))
        .isEqualTo(new SandboxUsage(5, 1_040_384, 8192));
  }

  @Test
  void aStoppedContainer_measuresNothing() throws IOException {
    assertThat(usageOf("{\"cpu_stats\":{},\"memory_stats\":{}}")).isEqualTo(SandboxUsage.UNKNOWN);
  }
}
