package dev.box.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How the words after {@code box exec} become one {@code /bin/sh -c} command string. */
class ShellWordsTest {

  @Test
  void oneWord_isTakenAsAShellCommand() {
    assertThat(ShellWords.join(List.of("echo hi | wc -c"))).isEqualTo("echo hi | wc -c");
  }

  @Test
  void severalWords_areEachSingleQuoted() {
    assertThat(ShellWords.join(List.of("echo", "a b", "", "$X"))).isEqualTo("'echo' 'a b' '' '$X'");
  }

  @Test
  void aSingleQuoteInsideAWord_closesQuotesEscapesAndReopens() {
    assertThat(ShellWords.quote("it's")).isEqualTo("'it'\\''s'");
  }
}
