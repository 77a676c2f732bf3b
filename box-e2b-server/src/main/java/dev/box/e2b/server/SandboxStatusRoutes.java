package dev.box.e2b.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxSessionNotFoundException;
import io.javalin.http.Context;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * E2B's routes about a running sandbox beyond its record: its metrics (of one sandbox, and of
 * several at once), its logs (v1 and v2), and the update of its network, which Box serves only when
 * it changes nothing ({@link NetworkUpdate}).
 *
 * @param sandboxes the sandboxes
 * @param answers how answers are written
 * @param metrics measures them
 */
record SandboxStatusRoutes(E2bSandboxes sandboxes, E2bAnswers answers, SandboxMetrics metrics) {
  /** The most sandboxes one metrics request may name. */
  static final int MAX_METRICS_IDS = 100;

  /**
   * {@code GET /sandboxes/{id}/metrics}: one metric, measured now, whatever {@code start} and
   * {@code end} ask (Box keeps no history); they are checked all the same.
   */
  void metrics(Context ctx) throws IOException {
    E2bSandbox sandbox = sandboxes.require(ctx.pathParam("id"));
    long start = LogQuery.number(ctx, "start", 0, Long.MAX_VALUE);
    long end = LogQuery.number(ctx, "end", Long.MAX_VALUE, Long.MAX_VALUE);
    if (start > end) {
      throw ApiError.badRequest("start must not be after end");
    }
    ArrayNode series = answers.mapper().createArrayNode();
    series.add(metrics.measure(sandbox));
    metrics.retain(sandboxes.list());
    answers.json(ctx, 200, series);
  }

  /**
   * {@code GET /sandboxes/metrics?sandbox_ids=a,b}: the metric of each named sandbox that runs, by
   * id; an unknown one is left out.
   */
  void batchMetrics(Context ctx) throws IOException {
    Set<String> ids = new LinkedHashSet<>();
    for (String value : ctx.queryParams("sandbox_ids")) {
      for (String id : value.split(",", -1)) {
        if (!id.isBlank()) {
          ids.add(id.strip());
        }
      }
    }
    if (ids.isEmpty()) {
      throw ApiError.badRequest("sandbox_ids is required: the ids, separated by commas");
    }
    if (ids.size() > MAX_METRICS_IDS) {
      throw ApiError.badRequest("sandbox_ids names more than " + MAX_METRICS_IDS + " sandboxes");
    }
    ObjectNode body = answers.mapper().createObjectNode();
    ObjectNode byId = body.putObject("sandboxes");
    for (String id : ids) {
      E2bSandbox sandbox = sandboxes.find(id);
      if (sandbox != null) {
        try {
          byId.set(id, metrics.measure(sandbox));
        } catch (BoxSessionNotFoundException e) {
          // Killed meanwhile: left out, as an unknown id.
        }
      }
    }
    metrics.retain(sandboxes.list());
    answers.json(ctx, 200, body);
  }

  /** {@code GET /sandboxes/{id}/logs}: {@code SandboxLogs}, oldest first. */
  void logs(Context ctx) throws IOException {
    E2bSandbox sandbox = sandboxes.require(ctx.pathParam("id"));
    answers.json(
        ctx, 200, LogQuery.v1Json(answers.mapper(), LogQuery.v1(ctx).select(sandbox.log())));
  }

  /** {@code GET /v2/sandboxes/{id}/logs}: {@code SandboxLogsV2Response}. */
  void logsV2(Context ctx) throws IOException {
    E2bSandbox sandbox = sandboxes.require(ctx.pathParam("id"));
    ObjectNode body = answers.mapper().createObjectNode();
    ArrayNode logs = body.putArray("logs");
    LogQuery.v2(ctx)
        .select(sandbox.log())
        .forEach(e -> logs.add(LogQuery.json(answers.mapper(), e)));
    answers.json(ctx, 200, body);
  }

  /**
   * {@code PUT /sandboxes/{id}/network}: 204 when it asks for the network the sandbox has; any
   * change is refused with 501 and the reason, never accepted and left unapplied.
   */
  void network(Context ctx) throws IOException {
    E2bSandbox sandbox = sandboxes.require(ctx.pathParam("id"));
    NetworkUpdate update = NetworkUpdate.read(Bodies.json(ctx, answers.mapper()));
    if (!update.matches(sandbox.spec())) {
      throw new ApiError(
          501,
          "changing a running sandbox's network is not supported by Box: a sandbox's network is"
              + " set when it starts and cannot change while it runs; create a sandbox with the"
              + " network it needs (allow_internet_access, network.allowOut, network.denyOut)");
    }
    ctx.status(204);
  }
}
