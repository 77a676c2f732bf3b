package dev.box.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The runtime's settings: defaults and the ranges the constructor enforces. */
class RuntimeConfigTest {
  private static final Path DATA = Path.of("/srv/box-data");

  private static RuntimeConfig config(Duration ttl, int maxSessions, int maxOutputBytes) {
    return new RuntimeConfig(DATA, ttl, maxSessions, maxOutputBytes, List.of());
  }

  @Test
  void defaults_areTheIssuesValues() {
    RuntimeConfig config = RuntimeConfig.defaults(DATA);

    assertThat(config.dataDir()).isEqualTo(DATA);
    assertThat(config.sessionTtl()).isEqualTo(Duration.ofSeconds(300));
    assertThat(config.maxSessions()).isEqualTo(64);
    assertThat(config.maxOutputBytes()).isEqualTo(1_048_576);
    assertThat(config.allowedMountRoots()).isEmpty();
  }

  @Test
  void negativeSessionTtl_isRefused() {
    assertThatThrownBy(() -> config(Duration.ofSeconds(-1), 64, 1024))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("session_ttl_sec must not be negative");
  }

  @Test
  void zeroSessionTtl_isAcceptedAndDisablesReaping() {
    assertThat(config(Duration.ZERO, 64, 1024).sessionTtl()).isZero();
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, Integer.MIN_VALUE})
  void negativeMaxSessions_isRefused(int maxSessions) {
    assertThatThrownBy(() -> config(Duration.ZERO, maxSessions, 1024))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max_sessions must not be negative");
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 5000})
  void maxSessionsInRange_isAccepted(int maxSessions) {
    assertThat(config(Duration.ZERO, maxSessions, 1024).maxSessions()).isEqualTo(maxSessions);
  }

  @ParameterizedTest
  @ValueSource(ints = {1023, 1, 0, -1})
  void maxOutputBytesBelow1024_isRefused(int maxOutputBytes) {
    assertThatThrownBy(() -> config(Duration.ZERO, 64, maxOutputBytes))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max_output_bytes must be at least 1024");
  }

  @Test
  void maxOutputBytesOf1024_isAccepted() {
    assertThat(config(Duration.ZERO, 64, 1024).maxOutputBytes()).isEqualTo(1024);
  }

  @Test
  void allowedMountRoots_areCopiedAndUnmodifiable() {
    List<Path> roots = new ArrayList<>(List.of(Path.of("/srv")));
    RuntimeConfig config = new RuntimeConfig(DATA, Duration.ZERO, 1, 1024, roots);
    roots.add(Path.of("/home"));

    assertThat(config.allowedMountRoots()).containsExactly(Path.of("/srv"));
    assertThatThrownBy(() -> config.allowedMountRoots().add(Path.of("/x")))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void withSessionTtl_changesOnlyTheTtl() {
    RuntimeConfig config =
        new RuntimeConfig(DATA, Duration.ofSeconds(5), 3, 4096, List.of(Path.of("/srv")));

    RuntimeConfig changed = config.withSessionTtl(Duration.ofMinutes(1));

    assertThat(changed)
        .isEqualTo(
            new RuntimeConfig(DATA, Duration.ofMinutes(1), 3, 4096, List.of(Path.of("/srv"))));
  }

  @Test
  void withMaxSessions_changesOnlyTheCapacity() {
    RuntimeConfig config =
        new RuntimeConfig(DATA, Duration.ofSeconds(5), 3, 4096, List.of(Path.of("/srv")));

    RuntimeConfig changed = config.withMaxSessions(9);

    assertThat(changed)
        .isEqualTo(
            new RuntimeConfig(DATA, Duration.ofSeconds(5), 9, 4096, List.of(Path.of("/srv"))));
  }

  @Test
  void copies_areValidatedToo() {
    RuntimeConfig config = RuntimeConfig.defaults(DATA);

    assertThatThrownBy(() -> config.withSessionTtl(Duration.ofSeconds(-5)))
        .hasMessage("session_ttl_sec must not be negative");
    assertThatThrownBy(() -> config.withMaxSessions(-1))
        .hasMessage("max_sessions must not be negative");
  }
}
