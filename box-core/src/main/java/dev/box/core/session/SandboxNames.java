package dev.box.core.session;

import dev.box.core.Hashes;
import java.util.Locale;

/** Names for what a session creates on the host: safe for files and cgroups, unique per id. */
public final class SandboxNames {
  /** The instance part of the names of persistent sessions: they outlive every instance. */
  static final String PERSISTENT = "persistent";

  private SandboxNames() {}

  /**
   * {@code <instance>_<normalised id>-<8 hex of the id's SHA-256>}: the normalised id keeps a
   * readable 32-character prefix, the hash keeps two ids apart that normalise alike.
   */
  static String of(String instanceId, String sessionId) {
    return instanceId + "_" + normalise(sessionId) + "-" + Hashes.shortSha256(sessionId);
  }

  /**
   * The id as LangBot's runtime normalises it for names: runs of other characters than letters,
   * digits, {@code _ . -} become {@code -}, leading {@code - .} and trailing {@code -} go, lower
   * case, at most 32 characters, and {@code session} when nothing is left.
   */
  public static String normalise(String sessionId) {
    String norm =
        sessionId
            .replaceAll("[^a-zA-Z0-9_.-]+", "-")
            .replaceAll("^[-.]+|-+$", "")
            .toLowerCase(Locale.ROOT);
    if (norm.length() > 32) {
      norm = norm.substring(0, 32);
    }
    return norm.isEmpty() ? "session" : norm;
  }
}
