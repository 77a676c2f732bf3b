package dev.box.core.backend;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;

/**
 * The sandbox ended before a process could start in it (it was killed, or its exec agent died or
 * misbehaved): nothing of the request ran, so the caller may start a new sandbox and try once more.
 */
public final class SandboxGoneException extends BoxException {
  private static final long serialVersionUID = 1L;

  public SandboxGoneException(String message) {
    super(BoxErrorCode.RUNTIME_UNAVAILABLE, message);
  }
}
