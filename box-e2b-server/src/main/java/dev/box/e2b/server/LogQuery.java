package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * A query of a sandbox's {@link SandboxLog}, as E2B's logs routes take it: v1's {@code start} and
 * {@code limit}, or v2's {@code cursor}, {@code direction}, {@code level}, {@code limit} and {@code
 * search}.
 *
 * @param cursor the time in milliseconds the entries start at (forward) or end at (backward)
 * @param backward whether the newest come first, from {@code cursor} back
 * @param level the lowest level returned
 * @param limit the most entries returned, 0 to {@link SandboxLog#MAX_ENTRIES}
 * @param search what a message must contain, or empty
 */
record LogQuery(long cursor, boolean backward, SandboxLog.Level level, int limit, String search) {

  /** v1's query: {@code start} (milliseconds) and {@code limit}, oldest first. */
  static LogQuery v1(Context ctx) {
    return new LogQuery(
        number(ctx, "start", 0, Long.MAX_VALUE), false, SandboxLog.Level.DEBUG, limit(ctx), "");
  }

  /** v2's query; forward from the first entry, or backward from the last, when it has no cursor. */
  static LogQuery v2(Context ctx) {
    String direction = ctx.queryParam("direction");
    if (direction != null && !direction.equals("forward") && !direction.equals("backward")) {
      throw ApiError.badRequest("direction must be forward or backward, not '" + direction + "'");
    }
    boolean backward = "backward".equals(direction);
    String search = ctx.queryParam("search");
    return new LogQuery(
        number(ctx, "cursor", backward ? Long.MAX_VALUE : 0, Long.MAX_VALUE),
        backward,
        level(ctx.queryParam("level")),
        limit(ctx),
        search == null ? "" : search);
  }

  /** The entries of {@code log} this query selects, in its order. */
  List<SandboxLog.Entry> select(SandboxLog log) {
    Stream<SandboxLog.Entry> entries =
        log.entries().stream()
            .filter(e -> e.level().compareTo(level) >= 0)
            .filter(e -> e.message().contains(search))
            .filter(
                e -> backward ? e.at().toEpochMilli() <= cursor : e.at().toEpochMilli() >= cursor);
    if (backward) {
      entries = entries.sorted(Comparator.comparing(SandboxLog.Entry::at).reversed());
    }
    return entries.limit(limit).toList();
  }

  /** E2B's {@code SandboxLogEntry} of {@code entry}. */
  static ObjectNode json(ObjectMapper mapper, SandboxLog.Entry entry) {
    ObjectNode node = mapper.createObjectNode();
    node.put("timestamp", entry.at().toString());
    node.put("level", entry.level().wireName());
    node.put("message", entry.message());
    ObjectNode fields = node.putObject("fields");
    entry.fields().forEach(fields::put);
    return node;
  }

  /** v1's {@code SandboxLogs}: each entry as a line and as a structured entry. */
  static ObjectNode v1Json(ObjectMapper mapper, List<SandboxLog.Entry> entries) {
    ObjectNode body = mapper.createObjectNode();
    ArrayNode lines = body.putArray("logs");
    ArrayNode structured = body.putArray("logEntries");
    for (SandboxLog.Entry entry : entries) {
      lines.addObject().put("timestamp", entry.at().toString()).put("line", entry.message());
      structured.add(json(mapper, entry));
    }
    return body;
  }

  private static int limit(Context ctx) {
    return (int) number(ctx, "limit", SandboxLog.MAX_ENTRIES, SandboxLog.MAX_ENTRIES);
  }

  private static SandboxLog.Level level(@Nullable String query) {
    if (query == null || query.isEmpty()) {
      return SandboxLog.Level.DEBUG;
    }
    try {
      return SandboxLog.Level.valueOf(query.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest("level must be debug, info, warn or error, not '" + query + "'");
    }
  }

  /** The whole number {@code name}, 0 to {@code max}, or {@code fallback} when it is not given. */
  static long number(Context ctx, String name, long fallback, long max) {
    String query = ctx.queryParam(name);
    if (query == null || query.isEmpty()) {
      return fallback;
    }
    try {
      long value = Long.parseLong(query);
      if (value >= 0 && value <= max) {
        return value;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw ApiError.badRequest(
        name
            + " must be a whole number from 0"
            + (max == Long.MAX_VALUE ? "" : " to " + max)
            + ", not '"
            + query
            + "'");
  }
}
