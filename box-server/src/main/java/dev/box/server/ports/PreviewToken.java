package dev.box.server.ports;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * What a preview link's token says, and its encoding: 16 random bytes, when it was issued, when it
 * expires, the port and the session, followed by their HMAC-SHA256 under the server's key, all in
 * URL-safe base64. The random bytes make every token unguessable on their own; the HMAC makes every
 * field unforgeable, so that a token names one session's port and nothing else.
 *
 * @param sessionId the session whose port it opens
 * @param port the port, 1 to 65535
 * @param issuedAt when it was issued, to the millisecond
 * @param expiresAt when it stops working, to the millisecond
 */
record PreviewToken(String sessionId, int port, Instant issuedAt, Instant expiresAt) {
  private static final byte VERSION = 1;
  private static final int RANDOM_BYTES = 16;
  private static final int MAC_BYTES = 32;
  private static final int FIXED_BYTES = 1 + RANDOM_BYTES + 8 + 8 + 2;

  /** The most characters a token may have: a longer one is refused before it is decoded. */
  static final int MAX_CHARS = 1024;

  private static final String HMAC = "HmacSHA256";

  /** The token, signed with {@code key}. */
  String encode(byte[] key, SecureRandom random) {
    byte[] id = sessionId.getBytes(StandardCharsets.UTF_8);
    byte[] nonce = new byte[RANDOM_BYTES];
    random.nextBytes(nonce);
    ByteBuffer payload = ByteBuffer.allocate(FIXED_BYTES + id.length);
    payload
        .put(VERSION)
        .put(nonce)
        .putLong(issuedAt.toEpochMilli())
        .putLong(expiresAt.toEpochMilli())
        .putShort((short) port)
        .put(id);
    byte[] signed = payload.array();
    ByteBuffer token = ByteBuffer.allocate(signed.length + MAC_BYTES);
    token.put(signed).put(mac(key, signed));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(token.array());
  }

  /**
   * The token {@code text} says, or null when it is malformed or its HMAC under {@code key} does
   * not match (compared in constant time).
   */
  static @Nullable PreviewToken decode(String text, byte[] key) {
    if (text.isEmpty() || text.length() > MAX_CHARS) {
      return null;
    }
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (bytes.length < FIXED_BYTES + MAC_BYTES) {
      return null;
    }
    int signedLength = bytes.length - MAC_BYTES;
    ByteBuffer signed = ByteBuffer.wrap(bytes, 0, signedLength);
    byte[] expected = mac(key, Arrays.copyOf(bytes, signedLength));
    byte[] presented = Arrays.copyOfRange(bytes, signedLength, bytes.length);
    if (!MessageDigest.isEqual(expected, presented) || signed.get() != VERSION) {
      return null;
    }
    signed.position(signed.position() + RANDOM_BYTES);
    Instant issued = Instant.ofEpochMilli(signed.getLong());
    Instant expires = Instant.ofEpochMilli(signed.getLong());
    int port = Short.toUnsignedInt(signed.getShort());
    String id = new String(bytes, FIXED_BYTES, signedLength - FIXED_BYTES, StandardCharsets.UTF_8);
    return new PreviewToken(id, port, issued, expires);
  }

  private static byte[] mac(byte[] key, byte[] data) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(new SecretKeySpec(key, HMAC));
      return mac.doFinal(data);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is unavailable", e);
    }
  }
}
