package dev.box.backend.boxlite;

import dev.box.core.Hashes;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The names Box gives its boxes, which say who owns each: BoxLite's create request has no labels,
 * and a box's name is the one field of its own that it lists. A name is {@code
 * dev.box.<data>.<instance>.<p|t>.<session>.<random>}: the hash of the server's data directory, the
 * hash of the server instance, whether the session is persistent, the hash of the session's id, and
 * a random part that keeps a name unique when the same session's box is made again. Names fit
 * BoxLite's pattern {@code ^[a-zA-Z0-9][a-zA-Z0-9._-]*$}.
 */
final class BoxNames {
  private static final Pattern NAME =
      Pattern.compile(
          "dev\\.box\\.([0-9a-f]{8})\\.([0-9a-f]{8})\\.([pt])\\.([0-9a-f]{8})\\.[0-9a-f]{8}");

  private BoxNames() {}

  /** Who a box belongs to, as its name says. */
  record Owner(String dataLabel, String instance, boolean persistent, String session) {}

  /**
   * The prefix of every box name of the server whose data directory hashes to {@code dataLabel}.
   */
  static String prefix(String dataLabel) {
    return "dev.box." + dataLabel + ".";
  }

  /** A fresh name for a box of the session {@code sessionId} of {@code instanceId}. */
  static String name(String dataLabel, String instanceId, boolean persistent, String sessionId) {
    return prefix(dataLabel)
        + Hashes.shortSha256(instanceId)
        + (persistent ? ".p." : ".t.")
        + Hashes.shortSha256(sessionId)
        + "."
        + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  }

  /** The owner a box's name records, or null for a name Box did not give. */
  static @Nullable Owner owner(String name) {
    Matcher m = NAME.matcher(name);
    return m.matches()
        ? new Owner(m.group(1), m.group(2), m.group(3).equals("p"), m.group(4))
        : null;
  }

  /** Whether {@code owner} is the session {@code sessionId}. */
  static boolean isSession(Owner owner, String sessionId) {
    return owner.session().equals(Hashes.shortSha256(sessionId));
  }

  /** Whether {@code owner} is the server instance {@code instanceId}. */
  static boolean isInstance(Owner owner, String instanceId) {
    return owner.instance().equals(Hashes.shortSha256(instanceId));
  }
}
