package dev.box.core.settings;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BooleanSettingTest {

  @Test
  void onUnless_isOff_onlyForItsSpellings_ignoringCaseAndSurroundingWhitespace() {
    BooleanSetting setting = BooleanSetting.onUnless("false", "0");

    for (String off : new String[] {"false", "FALSE", "False", " false ", "0", " 0\n"}) {
      assertThat(setting.parse(off)).as("'%s'", off).isFalse();
    }
    for (String on : new String[] {"true", "1", "no", "off", "", "  ", "00", "f"}) {
      assertThat(setting.parse(on)).as("'%s'", on).isTrue();
    }
    assertThat(setting.parse(null)).isTrue();
  }

  @Test
  void offUnlessExactly_isOn_onlyForItsSpellingsAsTheyStand() {
    BooleanSetting setting = BooleanSetting.offUnlessExactly("true");

    for (String on : new String[] {"true", "TRUE", "True"}) {
      assertThat(setting.parse(on)).as("'%s'", on).isTrue();
    }
    for (String off : new String[] {" true", "true ", "1", "yes", "on", "", "false"}) {
      assertThat(setting.parse(off)).as("'%s'", off).isFalse();
    }
    assertThat(setting.parse(null)).isFalse();
  }
}
