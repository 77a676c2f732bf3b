package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.javalin.http.Context;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * E2B's pagination of a list: the query's {@code limit} (1 to 100, 100 when absent) and {@code
 * nextToken} (here the offset of the page), and the next page's token in {@code x-next-token} while
 * there is one.
 */
final class Pages {
  private static final int MAX_PAGE = 100;

  private Pages() {}

  /**
   * The page of {@code all} the query of {@code ctx} asks for, into {@code page}; sets {@code
   * x-next-token} when more follow.
   *
   * @throws ApiError 400 for a limit or token that is not a whole number in range
   */
  static ArrayNode page(Context ctx, List<? extends JsonNode> all, ArrayNode page) {
    int limit = number(ctx.queryParam("limit"), MAX_PAGE, "limit");
    if (limit < 1 || limit > MAX_PAGE) {
      throw ApiError.badRequest("limit must be 1 to " + MAX_PAGE);
    }
    int offset = number(ctx.queryParam("nextToken"), 0, "nextToken");
    all.stream().skip(offset).limit(limit).forEach(page::add);
    if ((long) offset + limit < all.size()) {
      ctx.header("x-next-token", Integer.toString(offset + limit));
    }
    return page;
  }

  private static int number(@Nullable String query, int fallback, String name) {
    if (query == null || query.isEmpty()) {
      return fallback;
    }
    try {
      int value = Integer.parseInt(query);
      if (value >= 0) {
        return value;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw ApiError.badRequest(name + " must be a whole number, not '" + query + "'");
  }
}
