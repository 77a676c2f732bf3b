package dev.box.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class BenchOptionsTest {

  private static final long KIB = 1024;
  private static final long MIB = 1024 * KIB;

  /**
   * The full run; {@code --quick}, a fifth of it; and a tiny scale, which keeps at least one
   * iteration, two warm-up iterations, ten sessions and 4 MiB of raw relay bytes. The sizes are in
   * the order {@link #sizes_followTheScale} reads them.
   */
  static Stream<Arguments> scales() {
    return Stream.of(
        Arguments.of(List.of(), List.of(20, 200, 100, 300, 20, 1000, 2000, 256 * MIB, 2 * MIB)),
        Arguments.of(
            List.of("--quick", "--markdown", "out.md"),
            List.of(4, 40, 20, 60, 4, 200, 400, 51 * MIB, 410 * KIB)),
        Arguments.of(
            List.of("--iterations-scale", "0.001"),
            List.of(2, 1, 1, 1, 1, 10, 2, 4 * MIB, 2 * KIB)));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("scales")
  void sizes_followTheScale(List<String> args, List<Number> sizes) {
    assertThat(BenchOptions.parse(args))
        .extracting(
            BenchOptions::warmupIterations,
            BenchOptions::floorIterations,
            BenchOptions::coldIterations,
            BenchOptions::warmIterations,
            BenchOptions::execsPerClient,
            BenchOptions::memorySessions,
            BenchOptions::relayRoundTrips,
            BenchOptions::relayRawBytes,
            BenchOptions::relayLineBytes)
        .containsExactlyElementsOf(sizes);
  }

  @Test
  void markdown_isWrittenOnlyWhereAsked() {
    assertThat(BenchOptions.parse(List.of()).markdown()).isNull();
    assertThat(BenchOptions.parse(List.of("--quick", "--markdown", "out.md")).markdown())
        .isEqualTo(Path.of("out.md"));
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
