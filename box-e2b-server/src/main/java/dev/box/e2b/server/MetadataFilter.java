package dev.box.e2b.server;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code metadata} filter of {@code GET /v2/sandboxes}. The SDK percent-encodes each key and
 * value, joins the pairs as a form ({@code k=v&k2=v2}) and the whole is encoded once more as a
 * query parameter; the servlet undoes the last encoding, this class the two others.
 */
final class MetadataFilter {
  private MetadataFilter() {}

  /**
   * The pairs of {@code query} (already decoded once), each key and value decoded twice.
   *
   * @throws ApiError 400 when a pair has no {@code =} or an escape is malformed
   */
  static Map<String, String> parse(String query) {
    Map<String, String> pairs = new LinkedHashMap<>();
    if (query.isEmpty()) {
      return pairs;
    }
    for (String pair : query.split("&", -1)) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw ApiError.badRequest("metadata filter '" + pair + "' is not key=value");
      }
      pairs.put(twice(pair.substring(0, eq)), twice(pair.substring(eq + 1)));
    }
    return pairs;
  }

  /** Whether {@code metadata} holds every pair of {@code filter}. */
  static boolean matches(Map<String, String> filter, Map<String, String> metadata) {
    return filter.entrySet().stream().allMatch(e -> e.getValue().equals(metadata.get(e.getKey())));
  }

  private static String twice(String text) {
    try {
      String form = URLDecoder.decode(text, StandardCharsets.UTF_8);
      return URLDecoder.decode(form.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest("metadata filter has a malformed escape: " + text);
    }
  }
}
