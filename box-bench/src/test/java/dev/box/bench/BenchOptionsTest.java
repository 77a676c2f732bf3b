package dev.box.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {

  @Test
  void defaults_areTheFullRun() {
    BenchOptions options = BenchOptions.parse(List.of());

    assertThat(options.floorIterations()).isEqualTo(200);
    assertThat(options.coldIterations()).isEqualTo(100);
    assertThat(options.warmIterations()).isEqualTo(300);
    assertThat(options.execsPerClient()).isEqualTo(20);
    assertThat(options.memorySessions()).isEqualTo(500);
    assertThat(options.warmupIterations()).isEqualTo(20);
    assertThat(options.relayRoundTrips()).isEqualTo(2000);
    assertThat(options.relayRawBytes()).isEqualTo(256L * 1024 * 1024);
    assertThat(options.relayLineBytes()).isEqualTo(2L * 1024 * 1024);
    assertThat(options.markdown()).isNull();
  }

  @Test
  void quick_runsAFifthOfTheIterations() {
    BenchOptions options = BenchOptions.parse(List.of("--quick", "--markdown", "out.md"));

    assertThat(options.floorIterations()).isEqualTo(40);
    assertThat(options.coldIterations()).isEqualTo(20);
    assertThat(options.warmIterations()).isEqualTo(60);
    assertThat(options.execsPerClient()).isEqualTo(4);
    assertThat(options.memorySessions()).isEqualTo(100);
    assertThat(options.relayRoundTrips()).isEqualTo(400);
    assertThat(options.relayRawBytes()).isEqualTo(51L * 1024 * 1024);
    assertThat(options.relayLineBytes()).isEqualTo(410L * 1024);
    assertThat(options.markdown()).isEqualTo(Path.of("out.md"));
  }

  @Test
  void tinyScale_keepsAtLeastOneIterationTenSessionsAndFourMiB() {
    BenchOptions options = BenchOptions.parse(List.of("--iterations-scale", "0.001"));

    assertThat(options.coldIterations()).isEqualTo(1);
    assertThat(options.warmupIterations()).isEqualTo(2);
    assertThat(options.memorySessions()).isEqualTo(10);
    assertThat(options.relayRoundTrips()).isEqualTo(2);
    assertThat(options.relayRawBytes()).isEqualTo(4L * 1024 * 1024);
    assertThat(options.relayLineBytes()).isEqualTo(2L * 1024);
  }

  @Test
  void badArguments_areRefusedWithAMessage() {
    assertThatThrownBy(() -> BenchOptions.parse(List.of("--fast")))
        .hasMessage("unknown argument '--fast'");
    assertThatThrownBy(() -> BenchOptions.parse(List.of("--markdown")))
        .hasMessage("--markdown needs a value");
    assertThatThrownBy(() -> BenchOptions.parse(List.of("--iterations-scale", "lots")))
        .hasMessage("--iterations-scale must be a number, not 'lots'");
    assertThatThrownBy(() -> BenchOptions.parse(List.of("--iterations-scale", "0")))
        .hasMessage("--iterations-scale must be > 0 and <= 10, not 0.0");
  }
}
