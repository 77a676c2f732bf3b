package dev.box.agenthost;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OutputCutTest {
  private static final int LIMIT = OutputCut.DEFAULT_LIMIT;

  @Test
  void exactlyTheLimit_isKeptWhole() {
    String text = "a".repeat(LIMIT);
    assertThat(OutputCut.of(text)).isEqualTo(new OutputCut(text, false));
  }

  @Test
  void oneOverTheLimit_keeps60PercentHeadAnd40PercentTailAroundTheNotice() {
    String text = "h".repeat(2400) + "x" + "t".repeat(1600);

    OutputCut cut = OutputCut.of(text);

    assertThat(cut.truncated()).isTrue();
    assertThat(cut.text()).hasSize(LIMIT);
    String notice = "\n\n... [38 characters truncated] ...\n\n";
    assertThat(cut.text()).contains(notice);
    int room = LIMIT - notice.length();
    assertThat(cut.text()).startsWith("h".repeat(room * 6 / 10) + "\n\n...");
    assertThat(cut.text()).endsWith("...\n\n" + "t".repeat(room - room * 6 / 10));
    assertThat(cut.text().length() - notice.length() + 38).isEqualTo(text.length());
  }

  @Test
  void longOutput_staysWithinTheLimit_andNamesWhatItDropped() {
    String text = "0123456789".repeat(100_000);

    OutputCut cut = OutputCut.of(text);

    assertThat(cut.text().length()).isLessThanOrEqualTo(LIMIT);
    assertThat(cut.text()).contains("... [996041 characters truncated] ...");
    assertThat(cut.text()).startsWith("0123456789").endsWith("0123456789");
  }

  @Test
  void emptyAndShortOutput_areUntouched() {
    assertThat(OutputCut.of("")).isEqualTo(new OutputCut("", false));
    assertThat(OutputCut.of("ok\n")).isEqualTo(new OutputCut("ok\n", false));
  }

  @Test
  void characters_areCodePoints_andSurrogatePairsAreNeverSplit() {
    String emoji = "\uD83D\uDE00"; // One character, two UTF-16 units.
    String fits = emoji.repeat(LIMIT);
    assertThat(OutputCut.of(fits).truncated()).as("4,000 characters in 8,000 units").isFalse();

    String over = emoji.repeat(LIMIT + 1);
    OutputCut cut = OutputCut.of(over);

    assertThat(cut.truncated()).isTrue();
    assertThat(cut.text().codePointCount(0, cut.text().length())).isEqualTo(LIMIT);
    String kept =
        cut.text().replaceAll("\n\n\\.\\.\\. \\[\\d+ characters truncated] \\.\\.\\.\n\n", "");
    assertThat(kept.codePoints()).allMatch(c -> c == 0x1F600);
  }

  @Test
  void multibyteLatin_countsCharactersNotBytes() {
    String text = "é".repeat(LIMIT);
    assertThat(OutputCut.of(text).truncated()).isFalse();
    assertThat(OutputCut.of(text + "é").text()).contains("[38 characters truncated]");
  }

  @Test
  void ofEnds_cutsAsTheWholeTextWouldBeCut() {
    String head = "a".repeat(LIMIT);
    String middle = "b".repeat(123_456);
    String tail = "c".repeat(LIMIT);

    OutputCut fromEnds = OutputCut.ofEnds(head, middle.length(), tail, LIMIT);

    assertThat(fromEnds).isEqualTo(OutputCut.of(head + middle + tail));
  }

  @Test
  void ofEnds_withNothingDropped_isTheCutOfBothEnds() {
    assertThat(OutputCut.ofEnds("ab", 0, "cd", LIMIT)).isEqualTo(new OutputCut("abcd", false));
  }

  @Test
  void ofEnds_refusesEndsTooShortForWhatWasDropped() {
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> OutputCut.ofEnds("a", 5, "c".repeat(LIMIT), LIMIT))
        .withMessage("each end must hold at least 4000 code points when some were dropped");
  }
}
