package dev.box.e2b.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/** The random ids and tokens of E2B's sandboxes, and the constant-time check of a token. */
final class Secrets {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final char[] ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
  private static final int ID_LENGTH = 20;

  private Secrets() {}

  /** A new sandbox id, 20 lowercase letters and digits, as E2B's look. */
  static String sandboxId() {
    char[] id = new char[ID_LENGTH];
    for (int i = 0; i < id.length; i++) {
      id[i] = ID_CHARS[RANDOM.nextInt(ID_CHARS.length)];
    }
    return new String(id);
  }

  /** A new envd access token: 32 random bytes in hex. */
  static String accessToken() {
    return hex(32);
  }

  /** {@code bytes} random bytes in hex. */
  static String hex(int bytes) {
    byte[] random = new byte[bytes];
    RANDOM.nextBytes(random);
    return HexFormat.of().formatHex(random);
  }

  /** Whether {@code presented} is {@code expected}, in time independent of where they differ. */
  static boolean same(String expected, @Nullable String presented) {
    return presented != null
        && MessageDigest.isEqual(
            expected.getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
  }
}
