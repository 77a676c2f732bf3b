package dev.box.backend.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.junit.jupiter.api.Test;

class ConnectEnvelopeTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void frame_isAFlagsByteABigEndianLengthAndTheMessage() {
    byte[] framed = ConnectEnvelope.frame(2, "{}".getBytes(StandardCharsets.UTF_8));

    assertThat(framed).containsExactly(2, 0, 0, 0, 2, '{', '}');
  }

  @Test
  void read_returnsEachEnvelope_thenNullAtACleanEnd() throws IOException {
    byte[] a = ConnectEnvelope.frame(0, "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
    byte[] b = ConnectEnvelope.frame(ConnectEnvelope.END_STREAM, new byte[0]);
    ByteArrayInputStream in = new ByteArrayInputStream(concat(a, b));

    ConnectEnvelope first = Objects.requireNonNull(ConnectEnvelope.read(in, 100));
    ConnectEnvelope second = Objects.requireNonNull(ConnectEnvelope.read(in, 100));

    assertThat(new String(first.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1}");
    assertThat(first.flags()).isZero();
    assertThat(second.flags()).isEqualTo(ConnectEnvelope.END_STREAM);
    assertThat(ConnectEnvelope.read(in, 100)).isNull();
  }

  @Test
  void read_refusesAnEnvelopeLargerThanTheBound_withoutReadingIt() {
    byte[] header = {0, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff};

    assertThatThrownBy(() -> ConnectEnvelope.read(new ByteArrayInputStream(header), 1 << 20))
        .isInstanceOf(IOException.class)
        .hasMessage("a message of 2147483647 bytes, more than 1048576");
  }

  @Test
  void read_refusesATruncatedMessage_andACompressedOne() {
    byte[] cut = {0, 0, 0, 0, 9, '{'};
    byte[] compressed = ConnectEnvelope.frame(ConnectEnvelope.COMPRESSED, new byte[1]);

    assertThatThrownBy(() -> ConnectEnvelope.read(new ByteArrayInputStream(cut), 100))
        .isInstanceOf(EOFException.class);
    assertThatThrownBy(() -> ConnectEnvelope.read(new ByteArrayInputStream(compressed), 100))
        .hasMessageContaining("compressed");
  }

  @Test
  void processEvents_parseConnectsJsonMapping_andASignalDeathIs128PlusTheSignal()
      throws IOException {
    ProcessEvent start = ProcessEvent.parse(JSON.readTree("{\"event\":{\"start\":{\"pid\":7}}}"));
    ProcessEvent data =
        ProcessEvent.parse(JSON.readTree("{\"event\":{\"data\":{\"stderr\":\"aGk=\"}}}"));
    ProcessEvent exit =
        ProcessEvent.parse(
            JSON.readTree(
                "{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true,\"status\":\"exit status 3\"}}}"));
    ProcessEvent killed =
        ProcessEvent.parse(
            JSON.readTree(
                "{\"event\":{\"end\":{\"exitCode\":-1,\"exited\":false,\"status\":\"signal: killed\"}}}"));

    assertThat(start).isEqualTo(new ProcessEvent.Started(7));
    assertThat(data)
        .isInstanceOfSatisfying(
            ProcessEvent.Output.class,
            o -> {
              assertThat(o.stderr()).isTrue();
              assertThat(o.bytes()).asString(StandardCharsets.UTF_8).isEqualTo("hi");
            });
    assertThat(exit).isEqualTo(new ProcessEvent.Ended(3));
    assertThat(killed).isEqualTo(new ProcessEvent.Ended(137));
  }

  @Test
  void processEvents_refuseOutputThatIsNotBase64() {
    assertThatThrownBy(
            () -> ProcessEvent.parse(JSON.readTree("{\"event\":{\"data\":{\"stdout\":\"%%\"}}}")))
        .isInstanceOf(IOException.class);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] all = new byte[a.length + b.length];
    System.arraycopy(a, 0, all, 0, a.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }
}
