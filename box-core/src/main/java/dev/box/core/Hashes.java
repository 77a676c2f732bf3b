package dev.box.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Digests of text: short, stable names for the directories, cgroups and tags a server creates, and
 * the digests of secrets it keeps instead of the secrets.
 */
public final class Hashes {
  private Hashes() {}

  /** The first 8 hex digits of the SHA-256 of {@code value}'s UTF-8 bytes. */
  public static String shortSha256(String value) {
    return HexFormat.of().formatHex(sha256(value), 0, 4);
  }

  /** The SHA-256 of {@code value}'s UTF-8 bytes. */
  public static byte[] sha256(String value) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
