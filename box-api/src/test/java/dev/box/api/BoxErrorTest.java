package dev.box.api;

import static dev.box.api.Validation.MAPPER;
import static dev.box.api.Validation.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Error codes, their HTTP statuses, and the error body that carries them between server and SDK.
 */
class BoxErrorTest {

  @ParameterizedTest(name = "{0} -> {1} {2}")
  @CsvSource({
    "VALIDATION_ERROR,          validation_error,          400",
    "UNAUTHORIZED,              unauthorized,              401",
    "NOT_FOUND,                 not_found,                 404",
    "METHOD_NOT_ALLOWED,        method_not_allowed,        405",
    "SESSION_NOT_FOUND,         session_not_found,         404",
    "MANAGED_PROCESS_NOT_FOUND, managed_process_not_found, 404",
    "SESSION_CONFLICT,          session_conflict,          409",
    "MANAGED_PROCESS_CONFLICT,  managed_process_conflict,  409",
    "OFFSET_GONE,               offset_gone,               410",
    "PAYLOAD_TOO_LARGE,         payload_too_large,         413",
    "CAPACITY_EXCEEDED,         capacity_exceeded,         429",
    "FILE_NOT_FOUND,            file_not_found,            404",
    "FILE_TYPE_CONFLICT,        file_type_conflict,        409",
    "READ_ONLY,                 read_only,                 409",
    "PERMISSION_DENIED,         permission_denied,         403",
    "STORAGE_FULL,              storage_full,              507",
    "INTERNAL_ERROR,            internal_error,            500",
    "BACKEND_UNAVAILABLE,       backend_unavailable,       503",
    "RUNTIME_UNAVAILABLE,       runtime_unavailable,       503"
  })
  void code_hasItsWireNameAndHttpStatus(BoxErrorCode code, String wire, int status) {
    assertThat(code.wireName()).isEqualTo(wire);
    assertThat(code.httpStatus()).isEqualTo(status);
    assertThat(BoxErrorCode.fromWire(wire)).isEqualTo(code);
    assertThat(MAPPER.valueToTree(code).asText()).isEqualTo(wire);
  }

  @ParameterizedTest
  @EnumSource(BoxErrorCode.class)
  void everyCode_isAClientOrServerErrorStatus(BoxErrorCode code) {
    assertThat(code.httpStatus()).isBetween(400, 599);
  }

  @ParameterizedTest
  @ValueSource(strings = {"teapot", "", "VALIDATION_ERROR", "Session_Not_Found"})
  void unknownWireName_isAnInternalError(String wire) {
    assertThat(BoxErrorCode.fromWire(wire)).isEqualTo(BoxErrorCode.INTERNAL_ERROR);
  }

  static Stream<BoxException> typedErrors() {
    return Stream.of(
        new BoxValidationException("memory_mb must be at least 32"),
        new BoxSessionNotFoundException("session s1 not found"),
        new BoxSessionConflictException("session s1 exists with a different network"),
        new BoxCapacityExceededException("max_sessions 64 reached"),
        new BoxBackendUnavailableException("bubblewrap is not installed"),
        new BoxRuntimeUnavailableException("shutting down"));
  }

  @ParameterizedTest
  @MethodSource("typedErrors")
  void errorBody_turnsBackIntoTheSameSubtypeAndMessage(BoxException error) {
    BoxException back = BoxError.of(error).toException();

    assertThat(back).isExactlyInstanceOf(error.getClass()).hasMessage(error.getMessage());
    assertThat(back.code()).isEqualTo(error.code());
  }

  @ParameterizedTest
  @MethodSource("typedErrors")
  void errorBody_survivesTheJsonWire(BoxException error) throws Exception {
    String text = MAPPER.writeValueAsString(BoxError.of(error));

    BoxException back = MAPPER.readValue(text, BoxError.class).toException();

    assertThat(back).isExactlyInstanceOf(error.getClass()).hasMessage(error.getMessage());
  }

  @ParameterizedTest
  @EnumSource(BoxErrorCode.class)
  void everyCode_survivesTheRoundTrip(BoxErrorCode code) {
    BoxException error = BoxException.of(code, "message of " + code);

    BoxException back = BoxError.of(error).toException();

    assertThat(back.code()).isEqualTo(code);
    assertThat(back).isExactlyInstanceOf(error.getClass()).hasMessage("message of " + code);
  }

  @ParameterizedTest
  @CsvSource({
    "VALIDATION_ERROR,    dev.box.api.BoxValidationException",
    "SESSION_NOT_FOUND,   dev.box.api.BoxSessionNotFoundException",
    "SESSION_CONFLICT,    dev.box.api.BoxSessionConflictException",
    "CAPACITY_EXCEEDED,   dev.box.api.BoxCapacityExceededException",
    "BACKEND_UNAVAILABLE, dev.box.api.BoxBackendUnavailableException",
    "RUNTIME_UNAVAILABLE, dev.box.api.BoxRuntimeUnavailableException",
    "UNAUTHORIZED,        dev.box.api.BoxException",
    "INTERNAL_ERROR,      dev.box.api.BoxException"
  })
  void exceptionOfCode_isTheMatchingSubtype(BoxErrorCode code, Class<?> type) {
    assertThat(BoxException.of(code, "m")).isExactlyInstanceOf(type);
  }

  @Test
  void errorBody_hasTheDocumentedShape() {
    JsonNode node = MAPPER.valueToTree(BoxError.of(new BoxSessionNotFoundException("gone")));

    assertThat(node.fieldNames()).toIterable().containsExactly("error");
    assertThat(node.get("error").fieldNames()).toIterable().containsExactly("code", "message");
    assertThat(node.get("error").get("code").asText()).isEqualTo("session_not_found");
    assertThat(node.get("error").get("message").asText()).isEqualTo("gone");
  }

  @Test
  void errorBodyWithAnUnknownCode_becomesAnInternalError() throws Exception {
    BoxError body =
        MAPPER.readValue(json("{'error': {'code': 'brand_new', 'message': 'm'}}"), BoxError.class);

    BoxException back = body.toException();

    assertThat(back.code()).isEqualTo(BoxErrorCode.INTERNAL_ERROR);
    assertThat(back).hasMessage("m");
  }
}
