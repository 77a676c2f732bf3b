package dev.box.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Short, stable names derived from text: for directories, cgroups and tags a server creates. */
public final class Hashes {
  private Hashes() {}

  /** The first 8 hex digits of the SHA-256 of {@code value}'s UTF-8 bytes. */
  public static String shortSha256(String value) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 4);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
