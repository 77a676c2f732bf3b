package dev.box.langbot;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Who may drive the control channel: the shared token (compared in constant time) and the one
 * LangBot instance pinned by {@code X-LangBot-Instance-Id}. Thread-safe.
 */
public final class ControlAuth {
  /** The header carrying the shared token. */
  public static final String TOKEN_HEADER = "X-LangBot-Box-Control-Token";

  /** The header naming the LangBot instance. */
  public static final String INSTANCE_HEADER = "X-LangBot-Instance-Id";

  /** The relay header naming the Workspace. */
  public static final String WORKSPACE_HEADER = "X-LangBot-Workspace-Id";

  /** The relay header carrying the placement generation. */
  public static final String GENERATION_HEADER = "X-LangBot-Placement-Generation";

  private static final Pattern INSTANCE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,127}");
  private static final Pattern STRONG_TOKEN = Pattern.compile("\\S{32,}");

  private final List<byte[]> tokens = new ArrayList<>();
  private final boolean langbotToken;
  private final AtomicReference<@Nullable String> pinned;

  /**
   * Creates the checks.
   *
   * @param langbotToken {@code LANGBOT_BOX_CONTROL_TOKEN}, or null
   * @param boxToken Box's own control token, also accepted, or null
   * @param trustedInstance {@code LANGBOT_BOX_TRUSTED_INSTANCE_UUID}, or null to pin the first
   * @throws IllegalArgumentException when the LangBot token is weak or the instance id malformed
   */
  public ControlAuth(
      @Nullable String langbotToken, @Nullable String boxToken, @Nullable String trustedInstance) {
    if (langbotToken != null) {
      if (!STRONG_TOKEN.matcher(langbotToken).matches()) {
        throw new IllegalArgumentException(
            "LANGBOT_BOX_CONTROL_TOKEN must be at least 32 characters without whitespace");
      }
      tokens.add(langbotToken.getBytes(StandardCharsets.UTF_8));
    }
    if (boxToken != null) {
      tokens.add(boxToken.getBytes(StandardCharsets.UTF_8));
    }
    if (trustedInstance != null && !INSTANCE.matcher(trustedInstance).matches()) {
      throw new IllegalArgumentException(
          "LANGBOT_BOX_TRUSTED_INSTANCE_UUID is not a valid instance id");
    }
    this.langbotToken = langbotToken != null;
    this.pinned = new AtomicReference<>(trustedInstance);
  }

  /** Whether a LangBot token is configured (so LangBot's rules apply to the relay too). */
  public boolean langbotTokenConfigured() {
    return langbotToken;
  }

  /** Whether {@code presented} is a configured token; true when none is configured. */
  public boolean acceptsToken(@Nullable String presented) {
    if (tokens.isEmpty()) {
      return true;
    }
    byte[] given = presented == null ? new byte[0] : presented.getBytes(StandardCharsets.UTF_8);
    boolean match = false;
    for (byte[] token : tokens) {
      match |= MessageDigest.isEqual(token, given);
    }
    return match;
  }

  /**
   * Admits a connection from {@code instanceId}: the first well-formed id pins the instance unless
   * one is trusted already; any other id is refused.
   */
  public boolean admit(@Nullable String instanceId) {
    if (instanceId == null || !INSTANCE.matcher(instanceId).matches()) {
      return false;
    }
    pinned.compareAndSet(null, instanceId);
    return instanceId.equals(pinned.get());
  }

  /** Whether {@code instanceId} is the pinned instance. */
  public boolean isTrusted(@Nullable String instanceId) {
    String current = pinned.get();
    return current != null && current.equals(instanceId);
  }

  /** The pinned instance, or null before the first connection. */
  public @Nullable String pinnedInstance() {
    return pinned.get();
  }
}
