package dev.box.langbot;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.BoxJson;
import dev.box.api.BoxValidationException;
import dev.box.core.auth.ControlTokens;
import dev.box.core.session.SessionManager;
import java.nio.file.Path;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LangBot's control plane over one {@link SessionManager}: its auth, its tenancy and its actions,
 * shared by every transport (the {@code /rpc/ws} WebSocket, the stdio channel and the relay's
 * pre-upgrade checks).
 */
public final class LangBotControl {
  private static final Logger log = LoggerFactory.getLogger(LangBotControl.class);

  private final ControlAuth auth;
  private final Tenancy tenancy;
  private final ActionDispatcher dispatcher;
  private final ObjectMapper mapper = BoxJson.newMapper();

  /**
   * Creates the control plane.
   *
   * @param sessions the sessions the actions act on
   * @param auth who may connect
   */
  public LangBotControl(SessionManager sessions, ControlAuth auth) {
    this(sessions, auth, false, sessions.config().dataDir());
  }

  private LangBotControl(
      SessionManager sessions, ControlAuth auth, boolean unsafeSoftStorageLimits, Path dataDir) {
    this.auth = auth;
    this.tenancy = new Tenancy(sessions, Tenancy.DEFAULT_MAX_RECORDS);
    this.dispatcher =
        new ActionDispatcher(sessions, tenancy, auth, mapper, unsafeSoftStorageLimits, dataDir);
  }

  /**
   * The control plane configured from LangBot's environment variables: {@code
   * LANGBOT_BOX_CONTROL_TOKEN} and {@code LANGBOT_BOX_TRUSTED_INSTANCE_UUID}.
   *
   * @param tokens the server's control tokens, which include {@code LANGBOT_BOX_CONTROL_TOKEN} when
   *     it is set (see {@link ControlAuth#langbotToken})
   * @param stdio whether the channel runs over stdio, which requires a trusted instance
   * @param dataDir the runtime's data dir (LangBot's default {@code host_root}), whose {@code
   *     skills} directory holds skills when LangBot names no skills root
   * @throws IllegalArgumentException with the reference's message when a value is refused
   */
  public static LangBotControl fromEnvironment(
      SessionManager sessions,
      Map<String, String> env,
      ControlTokens tokens,
      boolean stdio,
      Path dataDir) {
    String trusted = blankToNull(env.get("LANGBOT_BOX_TRUSTED_INSTANCE_UUID"));
    if (stdio && trusted == null) {
      throw new IllegalArgumentException(
          "LANGBOT_BOX_TRUSTED_INSTANCE_UUID is required for stdio Box control");
    }
    ControlAuth auth = new ControlAuth(tokens, ControlAuth.langbotToken(env) != null, trusted);
    boolean unsafe = ManagedWorkspace.unsafeSoftStorageLimits(env);
    if (unsafe) {
      log.warn(
          "LANGBOT_BOX_ALLOW_UNSAFE_SOFT_STORAGE_LIMITS is enabled: managed sandboxes do not have"
              + " hard byte/inode storage quotas; use only in disposable non-production"
              + " environments");
    }
    LangBotControl control = new LangBotControl(sessions, auth, unsafe, dataDir);
    String config = blankToNull(env.get("LANGBOT_BOX_CONFIG"));
    if (config != null) {
      control.applyEnvironmentConfig(config);
    }
    return control;
  }

  private void applyEnvironmentConfig(String json) {
    JsonNode section;
    try {
      section = mapper.readTree(json);
    } catch (JsonProcessingException e) {
      log.warn("Failed to parse LANGBOT_BOX_CONFIG: {}", e.getOriginalMessage());
      return;
    }
    if (!section.isObject()) {
      log.warn("Failed to parse LANGBOT_BOX_CONFIG: not a JSON object");
      return;
    }
    try {
      dispatcher.applyConfig(section);
    } catch (BoxValidationException e) {
      throw new IllegalArgumentException("LANGBOT_BOX_CONFIG: " + e.getMessage(), e);
    }
  }

  /** Opens a connection whose messages go out through {@code sender}. */
  public ControlConnection open(ControlConnection.Sender sender) {
    return new ControlConnection(dispatcher, sender, mapper);
  }

  /**
   * Whether LangBot's grant-enforced mode is on: sandboxes then run only for admitted Workspaces
   * through the control channel, and never through the REST API or a relay.
   */
  public boolean admissionRequired() {
    return dispatcher.admissionRequired();
  }

  /** Grant-enforced mode's readiness report, check by check, or null when the mode is off. */
  public @Nullable JsonNode admissionReadiness() {
    return dispatcher.admissionReadiness();
  }

  /** Ends the sessions of Workspaces whose admission grants expired. */
  public void reapExpiredGrants() {
    dispatcher.reapExpiredGrants();
  }

  /** Who may connect. */
  public ControlAuth auth() {
    return auth;
  }

  /** The namespacing and the generation fence. */
  public Tenancy tenancy() {
    return tenancy;
  }

  ObjectMapper mapper() {
    return mapper;
  }

  private static @Nullable String blankToNull(@Nullable String value) {
    return value == null || value.isBlank() ? null : value.strip();
  }
}
