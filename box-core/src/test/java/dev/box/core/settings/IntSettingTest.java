package dev.box.core.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class IntSettingTest {
  private static final IntSetting SESSIONS = new IntSetting("max_sessions", 64, 0, 5000);

  @ParameterizedTest(name = "''{0}'' is {1}")
  @CsvSource(
      delimiter = '|',
      value = {"12|12", "' 12 '|12", "+12|12", "007|7", "-0|0", "0|0", "5000|5000"})
  void parse_acceptsADecimalIntegerInRange(String text, int value) {
    assertThat(SESSIONS.parse(text)).isEqualTo(value);
  }

  @Test
  void parse_givesTheDefault_forAbsentOrBlankText() {
    assertThat(SESSIONS.parse(null)).isEqualTo(64);
    assertThat(SESSIONS.parse("")).isEqualTo(64);
    assertThat(SESSIONS.parse("  ")).isEqualTo(64);
  }

  @Test
  void parse_refusesWhatIsNotAnInteger_quotingIt() {
    for (String text : new String[] {"1.5", "12abc", "0x10", "9999999999", " x "}) {
      assertThatThrownBy(() -> SESSIONS.parse(text))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("max_sessions must be an integer, not '" + text + "'");
    }
  }

  @Test
  void parse_refusesAnIntegerOutOfRange() {
    assertThatThrownBy(() -> SESSIONS.parse("-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max_sessions must be between 0 and 5000");
    assertThatThrownBy(() -> SESSIONS.parse("5001"))
        .hasMessage("max_sessions must be between 0 and 5000");
  }

  @Test
  void messages_nameTheSettingAsTheCallerDoes() {
    assertThat(SESSIONS.notAnInteger("box.limits.max_sessions"))
        .isEqualTo("box.limits.max_sessions must be an integer");
    assertThat(SESSIONS.outOfRange("box.limits.max_sessions"))
        .isEqualTo("box.limits.max_sessions must be between 0 and 5000");
  }

  @Test
  void allows_isTheInclusiveRange() {
    assertThat(SESSIONS.allows(0)).isTrue();
    assertThat(SESSIONS.allows(5000)).isTrue();
    assertThat(SESSIONS.allows(-1)).isFalse();
    assertThat(SESSIONS.allows(5001)).isFalse();
  }

  @Test
  void aDefaultOutsideTheRange_isRefused() {
    assertThatThrownBy(() -> new IntSetting("port", 70000, 0, 65535))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port: the default 70000 is outside 0..65535");
  }
}
