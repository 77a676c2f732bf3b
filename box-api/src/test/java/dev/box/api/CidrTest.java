package dev.box.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

  @ParameterizedTest
  @CsvSource({
    "198.51.100.7, 198.51.100.7/32",
    "10.1.2.3/8, 10.0.0.0/8",
    "0.0.0.0/0, 0.0.0.0/0",
    "172.31.255.255/12, 172.16.0.0/12",
    "::1, 0:0:0:0:0:0:0:1/128",
    "fd12:3456::7/7, fc00:0:0:0:0:0:0:0/7",
    "' 192.0.2.1/24 ', 192.0.2.0/24"
  })
  void parse_keepsTheCanonicalBlock(String text, String canonical) {
    assertThat(Cidr.parse(text)).hasToString(canonical);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "example.invalid",
        "localhost",
        "256.1.1.1",
        "1.2.3",
        "01.2.3.4",
        "1.2.3.4/",
        "1.2.3.4/33",
        "1.2.3.4/-1",
        "::1/129",
        ":::",
        "1.2.3.4/8/8",
        ""
      })
  void parse_refusesWhatIsNotAnAddressOrBlock_withoutLookingItUp(String text) {
    assertThatThrownBy(() -> Cidr.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + text + "'");
  }

  @Test
  void containsAndOverlaps_followThePrefix() {
    Cidr ten = Cidr.parse("10.0.0.0/8");
    Cidr host = Cidr.parse("10.77.0.5");

    assertThat(ten.contains(host)).isTrue();
    assertThat(host.contains(ten)).isFalse();
    assertThat(host.overlaps(ten)).isTrue();
    assertThat(ten.overlaps(Cidr.parse("11.0.0.0/8"))).isFalse();
    assertThat(ten.contains(Cidr.parse("::/0"))).isFalse();
    assertThat(Cidr.parse("10.1.2.3/8")).isEqualTo(ten);
  }
}
