package dev.box.agenthost;

import dev.box.api.BoxValidationException;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Session ids from templates such as {@code {launcher_type}_{launcher_id}}, rendered as Python's
 * {@code str.format_map} renders them in the reference: {@code {name}} is replaced by the variable,
 * a name no variable has renders as {@code unknown}, and {@code {{} / {@code }}} are literal
 * braces.
 *
 * <p>The scopes the reference offers: {@link #GLOBAL} (one sandbox for everyone), {@link
 * #PER_CONVERSATION} (the default), {@link #PER_USER} and {@link #PER_THREAD}.
 */
public final class SessionIdTemplate {
  /** One session for every conversation. */
  public static final String GLOBAL = "{global}";

  /** One session per conversation: the reference's default and recommended scope. */
  public static final String PER_CONVERSATION = "{launcher_type}_{launcher_id}";

  /** One session per user within a conversation. */
  public static final String PER_USER = "{launcher_type}_{launcher_id}_{sender_id}";

  /** One session per conversation thread. */
  public static final String PER_THREAD = "{launcher_type}_{launcher_id}_{conversation_id}";

  private SessionIdTemplate() {}

  /**
   * The session id for {@code context}: an operator's {@code forced} template wins over the
   * caller's {@code requested} one, which wins over {@link #PER_CONVERSATION}; blank counts as
   * absent.
   *
   * @throws BoxValidationException when the chosen template has an unmatched brace or renders to a
   *     blank id
   */
  public static String resolve(
      @Nullable String forced, @Nullable String requested, SessionContext context) {
    String template =
        forced != null && !forced.isBlank()
            ? forced
            : requested != null && !requested.isBlank() ? requested : PER_CONVERSATION;
    String id = render(template, context.variables()).strip();
    if (id.isEmpty()) {
      throw new BoxValidationException(
          "session id template '" + template + "' renders to an empty session id");
    }
    return id;
  }

  /**
   * {@code template} with each {@code {name}} replaced by its variable, or by {@code unknown}.
   *
   * @throws BoxValidationException for a brace without its partner
   */
  public static String render(String template, Map<String, String> variables) {
    StringBuilder out = new StringBuilder(template.length() + 16);
    int i = 0;
    while (i < template.length()) {
      char c = template.charAt(i);
      boolean doubled = i + 1 < template.length() && template.charAt(i + 1) == c;
      if ((c == '{' || c == '}') && doubled) {
        out.append(c);
        i += 2;
      } else if (c == '{') {
        int close = template.indexOf('}', i + 1);
        int nested = template.indexOf('{', i + 1);
        if (close < 0 || (nested >= 0 && nested < close)) {
          throw unmatched(template, c);
        }
        String value = variables.get(template.substring(i + 1, close));
        out.append(value == null ? SessionContext.UNKNOWN : value);
        i = close + 1;
      } else if (c == '}') {
        throw unmatched(template, c);
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  private static BoxValidationException unmatched(String template, char brace) {
    return new BoxValidationException(
        "session id template '" + template + "' has an unmatched '" + brace + "'");
  }
}
