package dev.box.api.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Loading the shell programs kept as resources beside the classes that run them. */
class ShellScriptTest {

  @Test
  void load_returnsTheResourceBesideTheClass_byteForByte() {
    assertThat(ShellScript.load(ShellScriptTest.class, "greeting.sh"))
        .isEqualTo("# shellcheck shell=sh\necho \"hello, $1\"\n");
  }

  @Test
  void load_missingScript_failsNamingItAndItsClass() {
    assertThatThrownBy(() -> ShellScript.load(ShellScriptTest.class, "gone.sh"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("missing shell script gone.sh beside " + ShellScriptTest.class.getName());
  }

  @Test
  void load_blankScript_fails() {
    assertThatThrownBy(() -> ShellScript.load(ShellScriptTest.class, "blank.sh"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("empty shell script blank.sh");
  }

  @Test
  void load_nameNotEndingInSh_isRefused() {
    assertThatThrownBy(() -> ShellScript.load(ShellScriptTest.class, "greeting.pl"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ending in .sh");
    assertThatThrownBy(() -> ShellScript.load(ShellScriptTest.class, "../internal/greeting.sh"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
