package dev.box.agenthost;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxValidationException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class ErrorRingTest {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-01-02T03:04:05Z"), ZoneOffset.UTC);

  @Test
  void ring_keepsTheMostRecentEntries_upToItsCapacity() {
    ErrorRing ring = new ErrorRing(ErrorRing.DEFAULT_CAPACITY, CLOCK);
    for (int i = 0; i < 120; i++) {
      ring.record("exec", "failure " + i, "s-" + i);
    }

    assertThat(ring.size()).isEqualTo(50);
    assertThat(ring.total()).isEqualTo(120);
    assertThat(ring.recent().getFirst().message()).isEqualTo("failure 70");
    assertThat(ring.recent().getLast())
        .isEqualTo(new ErrorRing.Entry(CLOCK.instant(), "exec", "failure 119", "s-119"));
  }

  @Test
  void exceptions_areRecordedByTheirSimpleClassName() {
    ErrorRing ring = new ErrorRing(2, CLOCK);
    ring.record(new BoxValidationException("bad"), null);

    assertThat(ring.recent())
        .containsExactly(
            new ErrorRing.Entry(CLOCK.instant(), "BoxValidationException", "bad", null));
  }
}
