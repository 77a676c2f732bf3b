package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.box.core.session.SessionManager;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@code POST /v1/sessions/{id}/pause} and {@code .../resume}: freeze or thaw every process of a
 * session, answering with the session as {@code GET /v1/sessions/{id}} shows it. Both are
 * idempotent; a backend that cannot pause is refused ({@code validation_error}, naming it).
 *
 * @param api the API, whose JSON answers these are
 * @param sessions the sessions paused and resumed
 * @param view the session as {@code GET /v1/sessions/{id}} shows it
 */
record PauseRoutes(HttpApi api, SessionManager sessions, Function<Context, JsonNode> view) {

  void register(JavalinConfig config) {
    config.routes.post("/v1/sessions/{id}/pause", ctx -> answer(ctx, sessions::pause));
    config.routes.post("/v1/sessions/{id}/resume", ctx -> answer(ctx, sessions::resume));
  }

  private void answer(Context ctx, Consumer<String> change) throws JsonProcessingException {
    change.accept(ctx.pathParam("id"));
    api.json(ctx, 200, view.apply(ctx));
  }
}
