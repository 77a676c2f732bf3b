package dev.box.agenthost;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxBackendHealth;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.client.FakeTime;
import dev.box.client.Sleeper;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The heartbeat and reconnect loop on fake time: a scripted probe stands for the server's answers
 * (the loop's timing is what is under test; {@link AgentHostTest} probes a real server), and the
 * sleeper returns at once, recording each wait, and ends the loop after the script runs out.
 */
class AvailabilityTest {
  private static final BoxBackendHealth UP =
      new BoxBackendHealth("bwrap", true, "test", Map.of(), List.of(), Map.of());

  private final FakeTime time = new FakeTime();
  private final List<String> events = new ArrayList<>();
  private final Deque<Boolean> answers = new ArrayDeque<>();

  private Availability availability() {
    Availability.Probe probe =
        () -> {
          Boolean up = answers.poll();
          if (up == null || !up) {
            throw new BoxRuntimeUnavailableException("connection refused");
          }
          return UP;
        };
    Sleeper endsWithTheScript =
        d -> {
          if (answers.isEmpty()) {
            throw new InterruptedException("script done");
          }
          time.sleep(d);
        };
    return new Availability(
        probe,
        endsWithTheScript,
        Backoff.RECONNECT,
        new Availability.Listener() {
          @Override
          public void connected() {
            events.add("connected");
          }

          @Override
          public void disconnected(String reason) {
            events.add("disconnected: " + reason);
          }
        });
  }

  private void script(boolean... ups) {
    for (boolean up : ups) {
      answers.add(up);
    }
  }

  @Test
  void reconnect_backsOffExponentially_upTo60Seconds() {
    script(false, false, false, false, false, false, false, false, true);
    Availability availability = availability();

    availability.run();

    assertThat(time.sleeps())
        .extracting(Duration::toSeconds)
        .containsExactly(3L, 6L, 12L, 24L, 48L, 60L, 60L, 60L);
    assertThat(events).containsExactly("connected");
  }

  @Test
  void heartbeat_every20Seconds_disconnectsAfterThreeFailuresInARow_thenReconnects() {
    script(true, true, false, false, true, false, false, false, false, true, true);
    Availability availability = availability();

    availability.run();

    assertThat(time.sleeps())
        .extracting(Duration::toSeconds)
        .as("heartbeats, then the reconnect backoff from its start, then heartbeats again")
        .containsExactly(20L, 20L, 20L, 20L, 20L, 20L, 20L, 3L, 20L);
    assertThat(events)
        .containsExactly("connected", "disconnected: Disconnected from Box runtime", "connected");
    assertThat(availability.available()).isTrue();
  }

  @Test
  void disconnected_isUnavailable_withTheReferencesConnectorError() {
    script(true, false, false, false);
    Availability availability = availability();

    availability.run();

    assertThat(availability.available()).isFalse();
    assertThat(availability.connectorError()).isEqualTo("Disconnected from Box runtime");
  }

  @Test
  void unavailableBackend_isConnectedButNotAvailable() {
    Availability availability =
        new Availability(
            () -> new BoxBackendHealth("docker", false, "no docker", Map.of(), List.of(), Map.of()),
            time,
            Backoff.RECONNECT,
            new Availability.Listener() {});

    assertThat(availability.probeNow()).isTrue();
    assertThat(availability.connected()).isTrue();
    assertThat(availability.available()).isFalse();
    assertThat(availability.connectorError())
        .isEqualTo("Configured sandbox backend \"docker\" is unavailable");
  }

  @Test
  void backoff_delays() {
    Backoff b = Backoff.RECONNECT;
    assertThat(List.of(b.delay(0), b.delay(1), b.delay(4), b.delay(5), b.delay(40)))
        .containsExactly(
            Duration.ofSeconds(3),
            Duration.ofSeconds(6),
            Duration.ofSeconds(48),
            Duration.ofSeconds(60),
            Duration.ofSeconds(60));
  }
}
