package dev.box.langbot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.BoxManagedProcessSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Failures rendered as the reference's {@code "<ExceptionClass>: <text>"}. */
class ErrorRenderingTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "PermissionError,         UNAUTHORIZED",
    "KeyError,                VALIDATION_ERROR",
    "BoxValidationError,      VALIDATION_ERROR",
    "BoxSessionNotFoundError, SESSION_NOT_FOUND",
    "BoxError,                INTERNAL_ERROR",
    "RuntimeError,            INTERNAL_ERROR"
  })
  void anActionError_isABoxException_withTheCodeItsClassNameStandsFor(
      String className, BoxErrorCode code) {
    BoxException error = new ActionError(className, "m");

    assertThat(error.code()).isEqualTo(code);
    assertThat(ErrorRendering.render(error)).isEqualTo(className + ": m");
  }

  @Test
  void aWrappedActionError_keepsItsClassName() {
    assertThat(ErrorRendering.render(new IllegalStateException(ActionError.missingKey("spec"))))
        .isEqualTo("KeyError: 'spec'");
  }

  @Test
  void dataThatDoesNotMap_isAValidationError() {
    Throwable failure =
        catchThrowable(() -> BoxJson.newMapper().readValue("[]", BoxManagedProcessSpec.class));

    assertThat(ErrorRendering.render(failure)).startsWith("BoxValidationError: invalid data: ");
  }

  @Test
  void anUnexpectedFailure_isABoxError_namingOnlyItsClass() {
    assertThat(ErrorRendering.render(new IllegalStateException("/secret/path")))
        .isEqualTo("BoxError: internal error: IllegalStateException");
  }
}
