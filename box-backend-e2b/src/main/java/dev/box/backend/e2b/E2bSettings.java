package dev.box.backend.e2b;

import java.net.URI;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How to reach the E2B service.
 *
 * @param apiKey the API key ({@code X-API-Key}), or null: the backend is then unavailable
 * @param apiUrl the control plane, for example {@code https://api.e2b.app}
 * @param template the template of sessions whose spec names no image of its own
 * @param envdUrl where each sandbox's envd is reached, with {@code {sandboxID}} and {@code
 *     {domain}} filled in: {@code https://49983-{sandboxID}.{domain}} for E2B itself; a self-hosted
 *     service behind one proxy may answer on a path instead
 */
public record E2bSettings(@Nullable String apiKey, String apiUrl, String template, String envdUrl) {
  private static final String API_KEY = "e2b_api_key";
  private static final String API_URL = "e2b_api_url";
  private static final String TEMPLATE = "e2b_template";
  private static final String ENVD_URL = "e2b_envd_url";

  /** The keys {@link #read} reads. */
  public static final List<String> KEYS = List.of(API_KEY, API_URL, TEMPLATE, ENVD_URL);

  /** E2B's own control plane. */
  public static final String DEFAULT_API_URL = "https://api.e2b.app";

  /** E2B's base template (Debian, a user named {@code user}). */
  public static final String DEFAULT_TEMPLATE = "base";

  /** envd's address on E2B: port 49983 of the sandbox's host name. */
  public static final String DEFAULT_ENVD_URL = "https://49983-{sandboxID}.{domain}";

  /** Checks the addresses. */
  public E2bSettings {
    apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey.strip();
    apiUrl = stripSlash(checkedUrl(API_URL, apiUrl));
    if (template.isBlank()) {
      throw new IllegalArgumentException(TEMPLATE + " must not be blank");
    }
    template = template.strip();
    checkedUrl(ENVD_URL, envdUrl.replace("{sandboxID}", "x").replace("{domain}", "x"));
    envdUrl = stripSlash(envdUrl.strip());
  }

  /**
   * Reads the settings from configured values (keys {@code e2b_api_key}, {@code e2b_api_url},
   * {@code e2b_template}, {@code e2b_envd_url}); the environment's {@code E2B_API_KEY} and {@code
   * E2B_API_URL} take precedence, as in LangBot's runtime.
   *
   * @throws IllegalArgumentException with a message for the user when a value is invalid
   */
  public static E2bSettings read(Map<String, String> values, Map<String, String> env) {
    String key = firstSet(env.get("E2B_API_KEY"), values.get(API_KEY));
    String url = firstSet(env.get("E2B_API_URL"), values.get(API_URL));
    String template = values.get(TEMPLATE);
    String envd = values.get(ENVD_URL);
    return new E2bSettings(
        key,
        url == null ? DEFAULT_API_URL : url,
        template == null || template.isBlank() ? DEFAULT_TEMPLATE : template,
        envd == null || envd.isBlank() ? DEFAULT_ENVD_URL : envd);
  }

  /** A copy with {@code apiKey}, {@code apiUrl} and {@code template} replaced where not null. */
  public E2bSettings with(
      @Nullable String newKey, @Nullable String newUrl, @Nullable String newTemplate) {
    return new E2bSettings(
        newKey == null ? apiKey : newKey,
        newUrl == null ? apiUrl : newUrl,
        newTemplate == null ? template : newTemplate,
        envdUrl);
  }

  /** The domain sandboxes live under when the service names none: the API's host minus "api.". */
  String defaultDomain() {
    String host = URI.create(apiUrl).getAuthority();
    return host.startsWith("api.") ? host.substring(4) : host;
  }

  /** The settings, with the API key shown as {@code <set>}: never the key itself. */
  @Override
  public String toString() {
    return "E2bSettings[apiKey="
        + (apiKey == null ? "null" : "<set>")
        + ", apiUrl="
        + apiUrl
        + ", template="
        + template
        + ", envdUrl="
        + envdUrl
        + "]";
  }

  private static @Nullable String firstSet(@Nullable String first, @Nullable String second) {
    if (first != null && !first.isBlank()) {
      return first.strip();
    }
    return second == null || second.isBlank() ? null : second.strip();
  }

  private static String checkedUrl(String key, String value) {
    URI uri;
    try {
      uri = URI.create(value.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(key + " is not a URL: '" + value + "'");
    }
    if (!("https".equals(uri.getScheme()) || "http".equals(uri.getScheme()))
        || uri.getAuthority() == null) {
      throw new IllegalArgumentException(key + " must be an http(s) URL, not '" + value + "'");
    }
    return value.strip();
  }

  private static String stripSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }
}
