package dev.box.backend.boxlite;

import java.net.URI;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How to reach a BoxLite server ({@code boxlite serve}).
 *
 * @param url the server's address, without {@code /v1}: {@code http://127.0.0.1:8100} for a local
 *     {@code boxlite serve}
 * @param token the bearer token every call but {@code GET /v1/config} carries, or null: the backend
 *     is then unavailable
 * @param image the image of sessions whose spec names Box's default image, or null to pass the
 *     spec's image as it is
 */
public record BoxliteSettings(String url, @Nullable String token, @Nullable String image) {
  private static final String URL = "boxlite_url";
  private static final String TOKEN = "boxlite_token";
  private static final String IMAGE = "image";

  /** The keys of the BoxLite backend that {@link #read} reads ({@code image} is shared). */
  public static final List<String> KEYS = List.of(URL, TOKEN);

  /** Where {@code boxlite serve} listens by default. */
  public static final String DEFAULT_URL = "http://127.0.0.1:8100";

  /** Checks the address and drops blank values. */
  public BoxliteSettings {
    url = checkedUrl(url);
    token = blankToNull(token);
    image = blankToNull(image);
  }

  /**
   * Reads the settings from configured values (keys {@code boxlite_url}, {@code boxlite_token},
   * {@code image}); the token may come from the environment as {@code BOX_BOXLITE_TOKEN}, like
   * every setting.
   *
   * @throws IllegalArgumentException with a message for the user when a value is invalid
   */
  public static BoxliteSettings read(Map<String, String> values) {
    String url = blankToNull(values.get(URL));
    return new BoxliteSettings(
        url == null ? DEFAULT_URL : url, values.get(TOKEN), values.get(IMAGE));
  }

  /** A copy with the token and the URL replaced where not null. */
  public BoxliteSettings with(@Nullable String newUrl, @Nullable String newToken) {
    return new BoxliteSettings(
        newUrl == null ? url : newUrl, newToken == null ? token : newToken, image);
  }

  /** The settings, with the token shown as {@code <set>}: never the token itself. */
  @Override
  public String toString() {
    return "BoxliteSettings[url="
        + url
        + ", token="
        + (token == null ? "null" : "<set>")
        + ", image="
        + image
        + "]";
  }

  private static String checkedUrl(String value) {
    String url = value.strip();
    URI uri;
    try {
      uri = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(URL + " is not a URL: '" + value + "'");
    }
    if (!("https".equals(uri.getScheme()) || "http".equals(uri.getScheme()))
        || uri.getAuthority() == null
        || uri.getRawQuery() != null
        || uri.getRawFragment() != null
        || uri.getRawUserInfo() != null) {
      throw new IllegalArgumentException(
          URL + " must be an http(s) URL of a host (and a path), not '" + value + "'");
    }
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }

  private static @Nullable String blankToNull(@Nullable String value) {
    return value == null || value.isBlank() ? null : value.strip();
  }
}
