package dev.box.core.files;

import dev.box.api.BoxValidationException;
import org.jspecify.annotations.Nullable;

/**
 * The path a files route names, as the sandbox will see it: absolute, or relative to the session's
 * mount path ({@code /workspace} by default). Repeated and trailing slashes are dropped; {@code .}
 * and {@code ..} are left for the sandbox's kernel to resolve, which cannot leave the sandbox's
 * root, so that they mean what they mean to a process inside it (through its symbolic links too).
 */
public final class SandboxPath {
  /** The longest path Linux accepts (PATH_MAX, the terminating NUL included). */
  static final int MAX_BYTES = 4095;

  private SandboxPath() {}

  /**
   * Resolves {@code requested} against {@code base}.
   *
   * @param requested the {@code path} parameter of the request
   * @param base the absolute directory a relative path starts from
   * @throws BoxValidationException when the path is missing, empty, holds a NUL byte or is longer
   *     than 4095 bytes
   */
  public static String resolve(@Nullable String requested, String base) {
    if (requested == null || requested.isEmpty()) {
      throw new BoxValidationException("path is required: ?path=/workspace/file");
    }
    if (requested.indexOf('\0') >= 0) {
      throw new BoxValidationException("path must not contain a NUL byte");
    }
    String absolute = requested.startsWith("/") ? requested : base + "/" + requested;
    String clean = absolute.replaceAll("/{2,}", "/");
    if (clean.length() > 1 && clean.endsWith("/")) {
      clean = clean.substring(0, clean.length() - 1);
    }
    if (clean.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_BYTES) {
      throw new BoxValidationException("path must be at most " + MAX_BYTES + " bytes");
    }
    return clean;
  }
}
