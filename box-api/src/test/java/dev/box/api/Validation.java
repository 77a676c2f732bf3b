package dev.box.api;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * Finds the {@link BoxValidationException} a call raised, directly or wrapped by Jackson while it
 * bound JSON.
 */
final class Validation {
  static final ObjectMapper MAPPER = BoxJson.newMapper();

  private Validation() {}

  /** The validation error {@code call} raised, looked up in the cause chain of what it threw. */
  static BoxValidationException errorOf(ThrowingCallable call) {
    Throwable[] thrown = new Throwable[1];
    assertThatThrownBy(call).satisfies(t -> thrown[0] = t);
    for (Throwable t = thrown[0]; t != null; t = t.getCause()) {
      if (t instanceof BoxValidationException validation) {
        return validation;
      }
    }
    return fail("expected a BoxValidationException in the cause chain of %s", thrown[0]);
  }

  /** The message of the validation error raised while binding {@code json} to a {@link BoxSpec}. */
  static String messageOfSpec(String json) {
    return String.valueOf(errorOf(() -> MAPPER.readValue(json, BoxSpec.class)).getMessage());
  }

  /** Binds {@code json} to a {@link BoxSpec}. */
  static BoxSpec spec(String json) throws Exception {
    return MAPPER.readValue(json, BoxSpec.class);
  }

  /** Turns single quotes into double quotes, so JSON in tests needs no escaping. */
  static String json(String singleQuoted) {
    return singleQuoted.replace('\'', '"');
  }
}
