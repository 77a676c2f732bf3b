package dev.box.mcpserver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.box.agenthost.OutputCut;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class OutputSpoolTest {
  private static final int LIMIT = OutputCut.DEFAULT_LIMIT;

  @Test
  void take_returnsWhatWasWrittenSinceTheLastTake() {
    OutputSpool spool = new OutputSpool(LIMIT);

    spool.write(bytes("one\n"));
    OutputSpool.Taken first = spool.take();
    spool.write(bytes("two\n"));
    OutputSpool.Taken second = spool.take();

    assertThat(first.output()).isEqualTo(new OutputCut("one\n", false));
    assertThat(second.output()).isEqualTo(new OutputCut("two\n", false));
    assertThat(second.ended()).isFalse();
    assertThat(spool.take().output()).isEqualTo(new OutputCut("", false));
  }

  @Test
  void anEndlessStream_isHeldBounded_andCutAsTheWholeWouldBe() {
    OutputSpool spool = new OutputSpool(LIMIT);
    StringBuilder whole = new StringBuilder();

    for (int i = 0; i < 10_000; i++) {
      String line = "line " + i + "\n";
      whole.append(line);
      spool.write(bytes(line));
    }

    assertThat(spool.take().output()).isEqualTo(OutputCut.of(whole.toString()));
  }

  @Test
  void aCharacterSplitAcrossWrites_isDecodedWhole() {
    OutputSpool spool = new OutputSpool(LIMIT);
    byte[] euro = bytes("€");

    spool.write(Arrays.copyOfRange(euro, 0, 1));
    spool.write(Arrays.copyOfRange(euro, 1, 3));

    assertThat(spool.take().output().text()).isEqualTo("€");
  }

  @Test
  void exit_flushesAPartialCharacter_andIsReportedOnce() {
    OutputSpool spool = new OutputSpool(LIMIT);

    spool.write(new byte[] {'a', (byte) 0xE2});
    spool.exited(3);
    spool.failed("the relay closed: exit_code=3");
    OutputSpool.Taken taken = spool.take();

    assertThat(taken.output().text()).isEqualTo("a\uFFFD");
    assertThat(taken.ended()).isTrue();
    assertThat(taken.exitCode()).isEqualTo(3);
    assertThat(taken.failure()).isNull();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
