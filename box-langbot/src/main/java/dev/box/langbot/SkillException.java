package dev.box.langbot;

/**
 * A skill-store failure with the message LangBot's own store gives; the skill actions answer it as
 * {@code BoxValidationError: <message>}.
 */
final class SkillException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  SkillException(String message) {
    super(message);
  }
}
