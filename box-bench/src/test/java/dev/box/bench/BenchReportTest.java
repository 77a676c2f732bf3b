package dev.box.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.bench.BenchReport.Bound;
import dev.box.bench.BenchReport.Target;
import org.junit.jupiter.api.Test;

class BenchReportTest {

  @Test
  void target_atItsLimit_passesOnlyWhenTheBoundIncludesIt() {
    assertThat(new Target("t", 2.0, Bound.AT_MOST, 2.0, false).result()).isEqualTo("PASS");
    assertThat(new Target("t", 2.0, Bound.BELOW, 2.0, false).result()).isEqualTo("MISS");
    assertThat(new Target("t", 200, Bound.AT_LEAST, 200, false).result()).isEqualTo("PASS");
  }

  @Test
  void atLeastTarget_missesBelowItsLimit_andPrintsItsBound() {
    Target throughput = new Target("MB/s", 199.9, Bound.AT_LEAST, 200, false);

    assertThat(throughput.met()).isFalse();
    assertThat(throughput.limitText()).isEqualTo(">= 200.00");
    assertThat(new Target("ms", 3, Bound.BELOW, 1, true).result()).isEqualTo("MISS (stretch)");
    assertThat(new Target("ms", 0.4, Bound.BELOW, 1, false).limitText()).isEqualTo("< 1.00");
  }
}
