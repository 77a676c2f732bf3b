package dev.box.api;

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

  /** An environment variable name the kernel and shells accept: no '=', no NUL, not empty. */
  static void envEntry(String key, String value) {
    if (key.isEmpty() || key.indexOf('=') >= 0 || key.indexOf('\0') >= 0) {
      throw new BoxValidationException("env key '" + key + "' is not a valid variable name");
    }
    if (value.indexOf('\0') >= 0) {
      throw new BoxValidationException("env value of " + key + " must not contain NUL characters");
    }
  }

  static boolean isUnder(String path, String root) {
    return path.equals(root) || path.startsWith(root.endsWith("/") ? root : root + "/");
  }
}
