package dev.box.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.testclient.Answer;
import org.junit.jupiter.api.Test;

/**
 * The backend as it runs where cgroups cannot be written (an unprivileged server), forced here with
 * {@code cgroups: false}: it says exactly what it enforces, and enforces that.
 */
class RlimitFallbackTest {

  @Test
  void withoutCgroups_memoryIsLimitedByRlimit_andHealthSaysPidsAndCpuAreNot() {
    try (TestServer box = TestServer.start("cgroups", "false")) {
      Answer health = box.get("/v1/health");

      assertThat(health.body().path("enforced").path("memory").asText()).isEqualTo("rlimit-as");
      assertThat(health.body().path("enforced").path("pids").asText()).isEqualTo("none");
      assertThat(health.body().path("enforced").path("cpu").asText()).isEqualTo("none");

      String grow = "head -c %d /dev/zero | tail -n 1 | wc -c";
      Answer small = box.exec("rl", grow.formatted(20_000_000), "\"memory_mb\":128");
      Answer big = box.exec("rl", grow.formatted(300_000_000), "\"memory_mb\":128");

      assertThat(small.text("stdout").strip()).isEqualTo("20000000");
      assertThat(big.text("stdout").strip()).isEqualTo("0");
      assertThat(big.text("stderr")).containsIgnoringCase("memory");
    }
  }
}
