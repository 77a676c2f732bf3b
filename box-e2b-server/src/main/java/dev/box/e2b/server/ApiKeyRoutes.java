package dev.box.e2b.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.time.Clock;

/**
 * Box's own routes that issue, list and revoke {@link ApiKeys}: {@code POST /v1/e2b/api-keys}
 * ({@code {"name": ...}}, 201 with the key, shown this once), {@code GET /v1/e2b/api-keys} and
 * {@code DELETE /v1/e2b/api-keys/{id}} (204, or 404). They are under {@code /v1}, so they need the
 * control token, as every Box route: a key cannot issue keys.
 *
 * @param keys the keys
 * @param mapper renders the answers
 * @param clock the time a key is issued at
 */
record ApiKeyRoutes(ApiKeys keys, ObjectMapper mapper, Clock clock) {
  static final String PATH = "/v1/e2b/api-keys";

  void register(JavalinConfig config) {
    config.routes.post(PATH, this::issue);
    config.routes.get(PATH, this::list);
    config.routes.delete(PATH + "/{id}", this::revoke);
  }

  private void issue(Context ctx) throws IOException {
    JsonNode body;
    try {
      body = Bodies.json(ctx, mapper);
    } catch (Bodies.TooLarge e) {
      throw new BoxException(BoxErrorCode.PAYLOAD_TOO_LARGE, String.valueOf(e.getMessage()));
    } catch (JsonProcessingException e) {
      throw new BoxException(BoxErrorCode.VALIDATION_ERROR, "the body must be a JSON object");
    }
    if (!body.isObject() || body.size() != 1 || !body.path("name").isTextual()) {
      throw new BoxException(
          BoxErrorCode.VALIDATION_ERROR, "the body must be {\"name\": \"...\"} and nothing else");
    }
    ApiKeys.Issued issued = keys.issue(body.path("name").asText(), clock.instant());
    ObjectNode answer = view(issued.key()).put("key", issued.secret());
    ctx.status(201).contentType("application/json").result(mapper.writeValueAsString(answer));
  }

  private void list(Context ctx) throws IOException {
    ArrayNode answer = mapper.createArrayNode();
    keys.list().forEach(key -> answer.add(view(key)));
    ctx.status(200).contentType("application/json").result(mapper.writeValueAsString(answer));
  }

  private void revoke(Context ctx) {
    if (!keys.revoke(ctx.pathParam("id"))) {
      throw new BoxException(BoxErrorCode.NOT_FOUND, "no API key " + ctx.pathParam("id"));
    }
    ctx.status(204);
  }

  private ObjectNode view(ApiKeys.Key key) {
    return mapper
        .createObjectNode()
        .put("id", key.id())
        .put("name", key.name())
        .put("created_at", key.createdAt().toString());
  }
}
