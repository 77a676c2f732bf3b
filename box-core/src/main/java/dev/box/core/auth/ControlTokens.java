package dev.box.core.auth;

import dev.box.core.Hashes;
import java.security.MessageDigest;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The control tokens a server accepts, and the one check every transport makes with them: the REST
 * routes, LangBot's {@code /rpc/ws} and the relay's WebSocket upgrade.
 *
 * <p>Only SHA-256 digests of the tokens are kept, and a presented token is compared digest to
 * digest with {@link MessageDigest#isEqual} against every accepted token, so the time a check takes
 * depends neither on how much of a token matched nor on its length, nor on which token did.
 * Immutable and thread-safe.
 */
public final class ControlTokens {
  private static final ControlTokens OPEN = new ControlTokens(List.of());

  private final List<byte[]> digests;

  private ControlTokens(List<byte[]> digests) {
    this.digests = digests;
  }

  /** No token: every request is accepted (the server runs with {@code --insecure}). */
  public static ControlTokens open() {
    return OPEN;
  }

  /**
   * Accepts any one of {@code tokens}.
   *
   * @throws IllegalArgumentException when there is none, or one is blank
   */
  public static ControlTokens of(List<String> tokens) {
    if (tokens.isEmpty()) {
      throw new IllegalArgumentException("at least one control token is required");
    }
    for (String token : tokens) {
      if (token.isBlank()) {
        throw new IllegalArgumentException("a control token must not be blank");
      }
    }
    return new ControlTokens(tokens.stream().map(ControlTokens::digest).toList());
  }

  /** Whether a request must present a token; false only for {@link #open()}. */
  public boolean required() {
    return !digests.isEmpty();
  }

  /** Whether {@code presented} is one of the tokens; always true when none is {@link #required}. */
  public boolean accepts(@Nullable String presented) {
    if (digests.isEmpty()) {
      return true;
    }
    byte[] given = digest(presented == null ? "" : presented);
    boolean match = false;
    for (byte[] digest : digests) {
      match |= MessageDigest.isEqual(digest, given);
    }
    return match && presented != null && !presented.isEmpty();
  }

  private static byte[] digest(String token) {
    return Hashes.sha256(token);
  }

  @Override
  public String toString() {
    return required() ? "ControlTokens[" + digests.size() + " token(s)]" : "ControlTokens[open]";
  }
}
