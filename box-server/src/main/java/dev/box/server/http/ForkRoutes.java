package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.box.api.BoxForkRequest;
import dev.box.api.BoxSnapshotList;
import dev.box.api.BoxSnapshotRequest;
import dev.box.api.BoxValidationException;
import dev.box.core.session.SessionForks;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;

/**
 * Forks and snapshots: {@code POST /v1/sessions/{id}/fork} starts a new session with a copy of the
 * session's workspace (201, as a create answers); {@code POST /v1/sessions/{id}/snapshots} keeps an
 * immutable copy of it by name (201); {@code GET /v1/snapshots}, {@code GET /v1/snapshots/{name}}
 * and {@code DELETE /v1/snapshots/{name}} (204) read and remove them.
 *
 * @param api the API, whose JSON answers these are
 * @param forks the forks and snapshots of the sessions
 */
record ForkRoutes(HttpApi api, SessionForks forks) {

  void register(JavalinConfig config) {
    config.routes.post("/v1/sessions/{id}/fork", this::fork);
    config.routes.post("/v1/sessions/{id}/snapshots", this::snapshot);
    config.routes.get(
        "/v1/snapshots", ctx -> api.json(ctx, 200, new BoxSnapshotList(forks.snapshots())));
    config.routes.get(
        "/v1/snapshots/{name}", ctx -> api.json(ctx, 200, forks.snapshot(ctx.pathParam("name"))));
    config.routes.delete(
        "/v1/snapshots/{name}",
        ctx -> {
          forks.deleteSnapshot(ctx.pathParam("name"));
          ctx.status(204);
        });
  }

  private void fork(Context ctx) throws JsonProcessingException {
    BoxForkRequest request = body(ctx, BoxForkRequest.class);
    api.json(ctx, 201, forks.fork(ctx.pathParam("id"), request));
  }

  private void snapshot(Context ctx) throws JsonProcessingException {
    BoxSnapshotRequest request = body(ctx, BoxSnapshotRequest.class);
    api.json(ctx, 201, forks.snapshot(ctx.pathParam("id"), request.name()));
  }

  private <T> T body(Context ctx, Class<T> type) throws JsonProcessingException {
    String body = ctx.body();
    if (body.isBlank() || !body.strip().startsWith("{")) {
      throw new BoxValidationException("request body must be a JSON object");
    }
    return api.mapper().readValue(body, type);
  }
}
