package dev.box.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LatenciesTest {

  @Test
  void percentiles_areNearestRankInMilliseconds() {
    long[] nanos = new long[100];
    for (int i = 0; i < nanos.length; i++) {
      nanos[i] = (100 - i) * 1_000_000L;
    }

    Latencies latencies = Latencies.ofNanos(nanos);

    assertThat(latencies).isEqualTo(new Latencies(100, 50.0, 95.0, 99.0));
  }

  @Test
  void percentiles_ofOneSample_areThatSample() {
    assertThat(Latencies.ofNanos(new long[] {2_500_000L}))
        .isEqualTo(new Latencies(1, 2.5, 2.5, 2.5));
  }

  @Test
  void noSamples_areRefused() {
    assertThatThrownBy(() -> Latencies.ofNanos(new long[0])).hasMessage("no samples");
  }
}
