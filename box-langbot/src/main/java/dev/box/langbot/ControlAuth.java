package dev.box.langbot;

import dev.box.core.auth.ControlTokens;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Who may drive the control channel: the server's control tokens (the same check as every other
 * route) and the one LangBot instance pinned by {@code X-LangBot-Instance-Id}. Thread-safe.
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

  private final ControlTokens tokens;
  private final boolean langbotToken;
  private final AtomicReference<@Nullable String> pinned;

  /**
   * Creates the checks.
   *
   * @param tokens the server's control tokens, LangBot's among them when it gave one
   * @param langbotToken whether {@code LANGBOT_BOX_CONTROL_TOKEN} is one of them (LangBot's rules
   *     then apply to the relay too)
   * @param trustedInstance {@code LANGBOT_BOX_TRUSTED_INSTANCE_UUID}, or null to pin the first
   * @throws IllegalArgumentException when the instance id is malformed
   */
  public ControlAuth(ControlTokens tokens, boolean langbotToken, @Nullable String trustedInstance) {
    if (trustedInstance != null && !INSTANCE.matcher(trustedInstance).matches()) {
      throw new IllegalArgumentException(
          "LANGBOT_BOX_TRUSTED_INSTANCE_UUID is not a valid instance id");
    }
    this.tokens = tokens;
    this.langbotToken = langbotToken;
    this.pinned = new AtomicReference<>(trustedInstance);
  }

  /**
   * LangBot's {@code LANGBOT_BOX_CONTROL_TOKEN} from {@code env}, stripped, or null when it is
   * unset or blank.
   *
   * @throws IllegalArgumentException with the reference's rule when it is weak
   */
  public static @Nullable String langbotToken(Map<String, String> env) {
    String token = env.get("LANGBOT_BOX_CONTROL_TOKEN");
    if (token == null || token.isBlank()) {
      return null;
    }
    String stripped = token.strip();
    if (!STRONG_TOKEN.matcher(stripped).matches()) {
      throw new IllegalArgumentException(
          "LANGBOT_BOX_CONTROL_TOKEN must be at least 32 characters without whitespace");
    }
    return stripped;
  }

  /** Whether a LangBot token is configured (so LangBot's rules apply to the relay too). */
  public boolean langbotTokenConfigured() {
    return langbotToken;
  }

  /** Whether {@code presented} is a control token of the server; true when none is required. */
  public boolean acceptsToken(@Nullable String presented) {
    return tokens.accepts(presented);
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
}
