package dev.box.e2b.server;

import dev.box.core.Hashes;
import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The signed URLs of E2B's SDK ({@code sbx.uploadUrl()}, {@code sbx.downloadUrl()}): a {@code
 * /files} URL whose query carries {@code signature=v1_<hash>} and, optionally, {@code
 * signature_expiration=<epoch seconds>}, where the hash is SHA-256, in unpadded base64, of {@code
 * path:operation:username:accessToken[:expiration]} ({@code read} for a download, {@code write} for
 * an upload; an absent path or user is empty). Such a URL names no sandbox, since the SDK builds it
 * on the root of {@code E2B_SANDBOX_URL}'s host; the sandbox is the one whose access token makes
 * the signature, and every candidate is compared in constant time.
 */
final class FileSignatures {
  private static final String PREFIX = "v1_";

  private FileSignatures() {}

  /**
   * The sandbox among {@code candidates} that signed {@code ctx}'s URL.
   *
   * @throws ApiError 401 when none did, or the signature has expired; 400 for a malformed
   *     expiration
   */
  static E2bSandbox verify(Context ctx, List<E2bSandbox> candidates, Instant now) {
    String signature = String.valueOf(ctx.queryParam("signature"));
    String expiration = ctx.queryParam("signature_expiration");
    if (expiration != null) {
      long seconds;
      try {
        seconds = Long.parseLong(expiration);
      } catch (NumberFormatException e) {
        throw ApiError.badRequest("signature_expiration must be a number of seconds");
      }
      if (now.getEpochSecond() > seconds) {
        throw new ApiError(401, "the signature of this URL has expired");
      }
    }
    String operation = ctx.method().name().equals("GET") ? "read" : "write";
    String unsigned =
        orEmpty(ctx.queryParam("path"))
            + ":"
            + operation
            + ":"
            + orEmpty(ctx.queryParam("username"))
            + ":";
    byte[] presented = signature.getBytes(StandardCharsets.UTF_8);
    E2bSandbox signer = null;
    for (E2bSandbox sandbox : candidates) {
      String raw = unsigned + sandbox.accessToken() + (expiration == null ? "" : ":" + expiration);
      if (MessageDigest.isEqual(sign(raw), presented) && signer == null) {
        signer = sandbox;
      }
    }
    if (signer == null) {
      throw new ApiError(401, "invalid signature: no running sandbox signed this URL");
    }
    return signer;
  }

  /** The signature of {@code raw}, as the SDK makes it. */
  static byte[] sign(String raw) {
    return (PREFIX + Base64.getEncoder().withoutPadding().encodeToString(Hashes.sha256(raw)))
        .getBytes(StandardCharsets.UTF_8);
  }

  private static String orEmpty(@Nullable String value) {
    return value == null ? "" : value;
  }
}
