package dev.box.server.ports;

import dev.box.api.BoxValidationException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A request path that reaches a sandbox's port, read from the raw (undecoded) path: {@code
 * /v1/sessions/{id}/ports/{port}[/path]} with the control token, or {@code /preview/<token>[/path]}
 * with a link. What follows the prefix is relayed as it came, so it is refused when it could be
 * read as another path than it looks: a dot segment ({@code .}, {@code ..}, encoded or not), an
 * encoded slash or backslash. A link's token therefore only ever reaches its own port, at a path
 * under its root.
 *
 * @param sessionId the session, for the control-token form; null for a link
 * @param port the port as it came, for the control-token form ({@link #port(String)} checks it)
 * @param token the link's token; null for the control-token form
 * @param relayed the path relayed to the port, from {@code /}, with the request's query, as it came
 *     ({@link #target()} checks it)
 * @param bare whether the path ended at the token or port, without the {@code /} after it
 */
public record PortPath(
    @Nullable String sessionId, String port, @Nullable String token, String relayed, boolean bare) {
  private static final Pattern DIRECT = Pattern.compile("/v1/sessions/([^/]+)/ports/([^/]*)(/.*)?");
  private static final Pattern PREVIEW = Pattern.compile("/preview/([^/]+)(/.*)?");

  /** The link routes that are Box's own, not relayed: POST and DELETE of this path. */
  public static final String LINKS = "/links";

  /**
   * The port path {@code rawPath} names, or null when it names none (any other route of the API).
   */
  public static @Nullable PortPath parse(String rawPath, @Nullable String rawQuery) {
    Matcher direct = DIRECT.matcher(rawPath);
    Matcher preview = PREVIEW.matcher(rawPath);
    String query = rawQuery == null ? "" : "?" + rawQuery;
    if (direct.matches()) {
      String rest = direct.group(3);
      return new PortPath(
          segment(direct.group(1)),
          direct.group(2),
          null,
          (rest == null ? "/" : rest) + query,
          rest == null);
    }
    if (preview.matches()) {
      String rest = preview.group(2);
      return new PortPath(
          null, "", preview.group(1), (rest == null ? "/" : rest) + query, rest == null);
    }
    return null;
  }

  /** A path segment decoded, or refused when an escape in it is malformed. */
  private static String segment(String raw) {
    try {
      return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new BoxValidationException("malformed request: a malformed '%' escape in the path");
    }
  }

  /** Whether this is Box's own link route for {@code method}, rather than a path to relay. */
  public boolean linkRoute(String method) {
    return token == null
        && relayed.equals(LINKS)
        && (method.equals("POST") || method.equals("DELETE"));
  }

  /**
   * The port {@code text} names.
   *
   * @throws BoxValidationException when it is not a number from 1 to 65535
   */
  public static int port(String text) {
    if (!text.isEmpty() && text.length() <= 5 && text.chars().allMatch(Character::isDigit)) {
      int port = Integer.parseInt(text);
      if (port >= 1 && port <= 65535) {
        return port;
      }
    }
    throw new BoxValidationException(
        "port must be a number from 1 to 65535, not '" + text.toLowerCase(Locale.ROOT) + "'");
  }

  /**
   * The path relayed to the port, with its query.
   *
   * @throws BoxValidationException when its path could be read as another path than it looks
   */
  public String target() {
    int query = relayed.indexOf('?');
    String lower = (query < 0 ? relayed : relayed.substring(0, query)).toLowerCase(Locale.ROOT);
    if (lower.contains("%2f") || lower.contains("%5c") || lower.contains("\\")) {
      throw new BoxValidationException("the path must not have an encoded slash or backslash");
    }
    for (String segment : lower.split("/", -1)) {
      String decoded = segment.replace("%2e", ".");
      if (decoded.equals(".") || decoded.equals("..")) {
        throw new BoxValidationException("the path must not have a '.' or '..' segment");
      }
    }
    return relayed;
  }
}
