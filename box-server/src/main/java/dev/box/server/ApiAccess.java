package dev.box.server;

import dev.box.api.BoxDataDir;
import dev.box.core.auth.ControlTokens;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Who may drive a server's API, decided once at startup. In order: the configured token ({@code
 * --control-token}, {@code BOX_CONTROL_TOKEN} or {@code control_token} in the config file) and
 * LangBot's ({@code LANGBOT_BOX_CONTROL_TOKEN}), either of which is accepted when both are given;
 * with neither, no token at all under {@code --insecure}; otherwise the token generated in the data
 * directory's control-token file (see {@link ControlTokenFile}).
 *
 * <p>{@link #toString()} never shows a token.
 */
final class ApiAccess {
  private final ControlTokens tokens;
  private final @Nullable String token;
  private final String description;

  private ApiAccess(ControlTokens tokens, @Nullable String token, String description) {
    this.tokens = tokens;
    this.token = token;
    this.description = description;
  }

  /**
   * Decides the access of a server with {@code config}, reading or creating the token file when it
   * comes to that. The caller holds the data directory's lock.
   *
   * @param langbotToken LangBot's token, checked already, or null
   * @throws IllegalStateException when the token file is refused or cannot be written
   */
  static ApiAccess decide(ServerConfig config, @Nullable String langbotToken) {
    String configured = config.controlToken();
    List<String> given = new ArrayList<>();
    if (configured != null) {
      given.add(configured);
    }
    if (langbotToken != null && !langbotToken.equals(configured)) {
      given.add(langbotToken);
    }
    if (configured != null) {
      return new ApiAccess(
          ControlTokens.of(given),
          configured,
          langbotToken == null
              ? "the configured control token"
              : "the configured control token and LangBot's (LANGBOT_BOX_CONTROL_TOKEN)");
    }
    if (langbotToken != null) {
      return new ApiAccess(
          ControlTokens.of(given),
          langbotToken,
          "LangBot's control token (LANGBOT_BOX_CONTROL_TOKEN)");
    }
    if (config.insecure()) {
      return new ApiAccess(ControlTokens.open(), null, "NOTHING (--insecure, no control token)");
    }
    String generated = ControlTokenFile.readOrCreate(config.dataDir(), new SecureRandom());
    return new ApiAccess(
        ControlTokens.of(List.of(generated)),
        generated,
        "the generated control token in " + BoxDataDir.tokenFile(config.dataDir()));
  }

  /** The tokens every route but the probes requires. */
  ControlTokens tokens() {
    return tokens;
  }

  /** The token a client presents (the configured one when there are two); null when open. */
  @Nullable String token() {
    return token;
  }

  /** What protects the API, for the startup log: never a token. */
  String description() {
    return description;
  }

  @Override
  public String toString() {
    return "ApiAccess[" + description + "]";
  }
}
