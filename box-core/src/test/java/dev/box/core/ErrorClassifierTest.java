package dev.box.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSessionNotFoundException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;

/** Every failure becomes a {@link BoxException}, with the code the user can act on. */
class ErrorClassifierTest {
  private static final ObjectMapper JSON = BoxJson.newMapper();
  private final ErrorClassifier classifier = new ErrorClassifier("invalid request body", "a test");

  @Test
  void aBoxException_keepsItsCode_evenWhenWrapped() {
    BoxSessionNotFoundException gone = new BoxSessionNotFoundException("session s not found");

    assertThat(classifier.classify(gone)).isSameAs(gone);
    assertThat(classifier.classify(new IllegalStateException("outer", gone))).isSameAs(gone);
  }

  @Test
  void aDocumentThatDoesNotMap_isAValidationErrorNamingTheField() {
    Throwable failure =
        catchThrowable(
            () ->
                JSON.readValue("{\"command\": \"sh\", \"args\": 7}", BoxManagedProcessSpec.class));

    BoxException error = classifier.classify(failure);

    assertThat(error.code()).isEqualTo(BoxErrorCode.VALIDATION_ERROR);
    assertThat(error).hasMessageStartingWith("invalid value for args: ");
  }

  @Test
  void aDocumentOfTheWrongShape_isNamedAsTheTransportCallsIt() {
    Throwable failure = catchThrowable(() -> JSON.readValue("[]", BoxManagedProcessSpec.class));

    assertThat(classifier.classify(failure)).hasMessageStartingWith("invalid request body: ");
  }

  @Test
  void malformedJson_isAValidationError() {
    Throwable failure = catchThrowable(() -> JSON.readTree("{not json"));

    BoxException error = classifier.classify(failure);

    assertThat(error.code()).isEqualTo(BoxErrorCode.VALIDATION_ERROR);
    assertThat(error).hasMessageStartingWith("malformed JSON: ");
  }

  @Test
  void anythingElse_isAnInternalError_namingOnlyTheClass() {
    BoxException error =
        classifier.classify(new UncheckedIOException("secret /path", new java.io.IOException()));

    assertThat(error.code()).isEqualTo(BoxErrorCode.INTERNAL_ERROR);
    assertThat(error).hasMessage("internal error: UncheckedIOException");
  }
}
