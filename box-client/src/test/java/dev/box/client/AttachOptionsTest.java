package dev.box.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The attach options: their defaults, and the exact messages of the values they refuse. */
class AttachOptionsTest {

  @Test
  void defaults_deliverLinesFromWhereTheLastDeliveryEnded_andReconnect() {
    AttachOptions options = AttachOptions.defaults();

    assertThat(options.delivery()).isEqualTo(AttachOptions.Delivery.LINES);
    assertThat(options.from()).isNull();
    assertThat(options.reconnectAttempts()).isEqualTo(5);
    assertThat(options.idleTimeout()).isEqualTo(Duration.ofSeconds(75));
    assertThat(options.maxLineBytes()).isEqualTo(16 * 1024 * 1024);
  }

  @Test
  void withers_changeOneSettingEach() {
    AttachOptions options =
        AttachOptions.defaults()
            .withDelivery(AttachOptions.Delivery.BYTES)
            .withFrom(42)
            .withReconnectAttempts(0)
            .withIdleTimeout(Duration.ZERO)
            .withMaxLineBytes(10);

    assertThat(options)
        .isEqualTo(new AttachOptions(AttachOptions.Delivery.BYTES, 42L, 0, Duration.ZERO, 10));
  }

  @Test
  void refusedValues_sayWhatIsExpected() {
    AttachOptions defaults = AttachOptions.defaults();

    assertThatThrownBy(() -> defaults.withFrom(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("from must be a byte offset (0 or more), not -1");
    assertThatThrownBy(() -> defaults.withReconnectAttempts(-1))
        .hasMessage("reconnectAttempts must be 0 or more, not -1");
    assertThatThrownBy(() -> defaults.withIdleTimeout(Duration.ofSeconds(-1)))
        .hasMessage("idleTimeout must not be negative, not PT-1S");
    assertThatThrownBy(() -> defaults.withMaxLineBytes(0))
        .hasMessage("maxLineBytes must be positive, not 0");
  }
}
