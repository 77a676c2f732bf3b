package dev.box.api;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** The validation rules of the model, each with the exact message of the reference runtime. */
final class ModelRules {
  private static final Pattern WINDOWS_ABSOLUTE = Pattern.compile("^([A-Za-z]:[\\\\/]|\\\\\\\\).*");
  private static final Pattern SKILL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

  private ModelRules() {}

  static String required(String field, @Nullable String value) {
    if (value == null) {
      throw new BoxValidationException(field + " is required");
    }
    return value;
  }

  static String sandboxPath(String field, String value) {
    String stripped = value.strip();
    if (!stripped.startsWith("/")) {
      throw new BoxValidationException(field + " must be an absolute path inside the sandbox");
    }
    rejectNul(field, stripped);
    return stripped;
  }

  static String hostPath(String value) {
    String stripped = value.strip();
    if (!stripped.startsWith("/") && !WINDOWS_ABSOLUTE.matcher(stripped).matches()) {
      throw new BoxValidationException("host_path must be an absolute host path");
    }
    rejectNul("host_path", stripped);
    return stripped;
  }

  static @Nullable String skillName(@Nullable String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    String stripped = value.strip();
    if (!SKILL_NAME.matcher(stripped).matches()) {
      throw new BoxValidationException(
          "skill_name can only contain up to 64 letters, numbers, hyphens and underscores");
    }
    return stripped;
  }

  static void rejectNul(String field, String value) {
    if (value.indexOf('\0') >= 0) {
      throw new BoxValidationException(field + " must not contain NUL characters");
    }
  }

  /**
   * The longest single string the kernel passes to a program (an argument, or one {@code K=V} of
   * the environment): {@code MAX_ARG_STRLEN}, 32 pages, less the terminating NUL.
   */
  static final int MAX_ARGUMENT_BYTES = 32 * 4096 - 1;

  /** The most bytes the environment of one command may hold in all, well inside {@code ARG_MAX}. */
  static final int MAX_ENV_BYTES = 1024 * 1024;

  /** Refuses a string the kernel would refuse to pass to the sandbox's program. */
  static void argument(String field, String value) {
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_ARGUMENT_BYTES) {
      throw new BoxValidationException(
          field + " is " + bytes + " bytes; the most is " + MAX_ARGUMENT_BYTES);
    }
  }

  /** An environment variable name the kernel and shells accept: no '=', no NUL, not empty. */
  static void envEntry(String key, String value) {
    if (key.isEmpty() || key.indexOf('=') >= 0 || key.indexOf('\0') >= 0) {
      throw new BoxValidationException(
          "env key '" + abbreviate(key) + "' is not a valid variable name");
    }
    if (value.indexOf('\0') >= 0) {
      throw new BoxValidationException(
          "env value of " + abbreviate(key) + " must not contain NUL characters");
    }
    argument("env entry " + abbreviate(key), key + "=" + value);
  }

  /** Refuses an environment larger than {@link #MAX_ENV_BYTES} in all. */
  static void envSize(java.util.Map<String, String> env) {
    long bytes = 0;
    for (var entry : env.entrySet()) {
      bytes += entry.getKey().length() + entry.getValue().length() + 2L;
    }
    if (bytes > MAX_ENV_BYTES) {
      throw new BoxValidationException(
          "env is about " + bytes + " bytes in all; the most is " + MAX_ENV_BYTES);
    }
  }

  private static String abbreviate(String text) {
    return text.length() <= 64 ? text : text.substring(0, 64) + "...";
  }

  static boolean isUnder(String path, String root) {
    return path.equals(root) || path.startsWith(root.endsWith("/") ? root : root + "/");
  }
}
