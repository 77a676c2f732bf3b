package dev.box.api.internal;

import static java.util.Objects.requireNonNull;
import static org.assertj.core.api.Assertions.assertThat;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessConflictException;
import dev.box.api.BoxManagedProcessNotFoundException;
import dev.box.api.BoxSessionNotFoundException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The relay's frames, reasons and close codes, as the server writes them and the client reads. */
class RelayProtocolTest {

  @Test
  void startFrame_readsBackItsOffset() {
    assertThat(RelayProtocol.startFrame(42)).isEqualTo("{\"type\":\"start\",\"offset\":42}");
    assertThat(RelayProtocol.startOffset(RelayProtocol.startFrame(42))).isEqualTo(42L);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "hello",
        "{\"type\":\"start\"}",
        "{\"type\":\"start\",\"offset\":1.5}",
        "{\"type\":\"stop\",\"offset\":1}",
        "[1]"
      })
  void otherText_isNoStartFrame(String text) {
    assertThat(RelayProtocol.startOffset(text)).isNull();
  }

  @Test
  void exitReason_readsBackItsCode() {
    assertThat(RelayProtocol.exitReason(137)).isEqualTo("exit_code=137");
    assertThat(RelayProtocol.exitCode(RelayProtocol.exitReason(137))).isEqualTo(137);
    assertThat(RelayProtocol.exitCode(RelayProtocol.STDOUT_CLOSED)).isNull();
  }

  @Test
  void offsetGoneReason_readsBackTheFirstAvailableOffset() {
    assertThat(RelayProtocol.offsetGoneReason(4096)).isEqualTo("offset gone; first_available=4096");
    assertThat(RelayProtocol.firstAvailable(RelayProtocol.offsetGoneReason(4096))).isEqualTo(4096L);
    assertThat(RelayProtocol.firstAvailable("offset gone")).isNull();
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "VALIDATION_ERROR,          4400",
    "UNAUTHORIZED,              4401",
    "NOT_FOUND,                 4404",
    "SESSION_NOT_FOUND,         4404",
    "MANAGED_PROCESS_NOT_FOUND, 4404",
    "SESSION_CONFLICT,          4409",
    "MANAGED_PROCESS_CONFLICT,  4409",
    "OFFSET_GONE,               4410",
    "CAPACITY_EXCEEDED,         4429",
    "INTERNAL_ERROR,            1011",
    "BACKEND_UNAVAILABLE,       4503",
    "RUNTIME_UNAVAILABLE,       4503"
  })
  void closeCode_saysWhatFailed(BoxErrorCode code, int closeCode) {
    assertThat(RelayProtocol.closeCode(code)).isEqualTo(closeCode);
  }

  @ParameterizedTest
  @EnumSource(BoxErrorCode.class)
  void everyError_readsBackAsTheSameCodeAndMessage(BoxErrorCode code) {
    BoxException error = BoxException.of(code, "message of " + code);

    BoxException back =
        requireNonNull(
            RelayProtocol.failure(RelayProtocol.closeCode(code), RelayProtocol.closeReason(error)));

    assertThat(back).isExactlyInstanceOf(error.getClass());
    assertThat(back.code()).isEqualTo(code);
    assertThat(back).hasMessage("message of " + code);
  }

  @Test
  void closesThatShareACode_areToldApartByTheirReason() {
    assertThat(RelayProtocol.failure(4404, "session_not_found: session s not found"))
        .isInstanceOf(BoxSessionNotFoundException.class)
        .hasMessage("session s not found");
    assertThat(
            RelayProtocol.failure(
                4404, "managed_process_not_found: session s has no managed process p"))
        .isInstanceOf(BoxManagedProcessNotFoundException.class);
    assertThat(RelayProtocol.failure(4409, "managed_process_conflict: p is not running"))
        .isInstanceOf(BoxManagedProcessConflictException.class);
  }

  @Test
  void aReasonWithoutAKnownCode_isTheErrorTheStatusSuggests() {
    BoxException failure = requireNonNull(RelayProtocol.failure(4404, "the process disappeared"));

    assertThat(failure).hasMessage("the process disappeared");
    assertThat(failure.code()).isEqualTo(BoxErrorCode.NOT_FOUND);
    assertThat(requireNonNull(RelayProtocol.failure(1011, "relay failed: x")).code())
        .isEqualTo(BoxErrorCode.INTERNAL_ERROR);
  }

  @ParameterizedTest
  @ValueSource(ints = {1000, 1001, 1006, 1009, 4000, 4399, 4600})
  void closesThatReportNoError_areNoFailure(int code) {
    assertThat(RelayProtocol.failure(code, "exit_code=0")).isNull();
  }

  @Test
  void aLongReason_isCutToFitACloseFrame_withoutSplittingACharacter() {
    String message = "é".repeat(200);

    String reason = RelayProtocol.closeReason(new BoxSessionNotFoundException(message));

    assertThat(reason.getBytes(StandardCharsets.UTF_8).length)
        .isLessThanOrEqualTo(RelayProtocol.MAX_REASON_BYTES);
    assertThat(reason).startsWith("session_not_found: éé").endsWith("é...");
    assertThat(RelayProtocol.failure(4404, reason)).isInstanceOf(BoxSessionNotFoundException.class);
  }
}
