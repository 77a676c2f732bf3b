package dev.box.agenthost;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What a session id template is rendered from: the ids of one agent turn, as LangBot takes them
 * from a query. Every id may be null; {@link #variables()} then fills it as the reference does.
 *
 * @param queryId the id of this turn (the reference's {@code query_id})
 * @param launcherType the kind of conversation, such as {@code person} or {@code group}
 * @param launcherId the conversation's id
 * @param senderId the user's id
 * @param conversationId the id of the conversation's current thread
 * @param extra further variables, such as {@code agent_id}; they win over the ids above
 */
public record SessionContext(
    @Nullable String queryId,
    @Nullable String launcherType,
    @Nullable String launcherId,
    @Nullable String senderId,
    @Nullable String conversationId,
    Map<String, String> extra) {

  /** The value an unset id renders as. */
  public static final String UNKNOWN = "unknown";

  /** Copies {@code extra}. */
  public SessionContext {
    extra = Map.copyOf(extra);
  }

  /** A context for one conversation of one user. */
  public static SessionContext of(String launcherType, String launcherId, String senderId) {
    return new SessionContext(null, launcherType, launcherId, senderId, null, Map.of());
  }

  /** A copy with the variable {@code name} set to {@code value}. */
  public SessionContext with(String name, String value) {
    Map<String, String> more = new LinkedHashMap<>(extra);
    more.put(name, value);
    return new SessionContext(queryId, launcherType, launcherId, senderId, conversationId, more);
  }

  /**
   * The template variables: {@code query_id} (or {@code unknown}), {@code launcher_type} (or {@code
   * query}), {@code launcher_id} (or the query id), {@code sender_id} (or the launcher id), {@code
   * conversation_id} (or {@code unknown}), {@code global} = {@code global}, then {@link #extra()}.
   */
  public Map<String, String> variables() {
    String query = orElse(queryId, UNKNOWN);
    String launcher = orElse(launcherId, query);
    Map<String, String> vars = new LinkedHashMap<>();
    vars.put("query_id", query);
    vars.put("launcher_type", orElse(launcherType, "query"));
    vars.put("launcher_id", launcher);
    vars.put("sender_id", orElse(senderId, launcher));
    vars.put("conversation_id", orElse(conversationId, UNKNOWN));
    vars.put("global", "global");
    vars.putAll(extra);
    return vars;
  }

  private static String orElse(@Nullable String value, String fallback) {
    return value == null || value.isBlank() ? fallback : value;
  }
}
