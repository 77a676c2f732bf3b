package dev.box.api;

import java.time.Instant;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * An immutable copy of a session's private workspace, kept by the server under a name until it is
 * deleted; a session created with {@code from_snapshot} starts with a copy of it.
 *
 * @param name the snapshot's name ({@link #checkName})
 * @param sessionId the session it was taken of
 * @param createdAt when it was taken (UTC)
 * @param sizeBytes the bytes its files hold, or null when the server did not count them
 */
public record BoxSnapshot(
    String name, String sessionId, Instant createdAt, @Nullable Long sizeBytes) {

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /** Checks the name. */
  public BoxSnapshot {
    checkName("name", name);
  }

  /**
   * Returns {@code name} when it is a snapshot name: a letter or digit, then up to 63 letters,
   * digits, dots, hyphens and underscores; never a path.
   *
   * @param field the field named in the message ({@code name}, {@code from_snapshot})
   * @throws BoxValidationException otherwise
   */
  public static String checkName(String field, @Nullable String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new BoxValidationException(
          field
              + " must be 1 to 64 letters, digits, '.', '-' or '_', starting with a letter or"
              + " digit");
    }
    return name;
  }
}
