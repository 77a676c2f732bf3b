package dev.box.e2b.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxCapabilities;
import dev.box.api.BoxSpec;
import dev.box.core.auth.ControlTokens;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * E2B's control plane at {@code /e2b}: a sandbox is created as a Box session on the server's
 * backend, listed, read, given a new timeout, paused, resumed and killed; its metrics, logs and
 * network update are {@link SandboxStatusRoutes}'; it is forked ({@link SandboxForks}) and its
 * workspace kept as a snapshot ({@link SandboxSnapshots}), which is listed, deleted and created
 * from as a template. Every request needs {@code X-API-Key}: one of the server's control tokens, or
 * a key it issued.
 *
 * @param sandboxes the sandboxes
 * @param answers how answers are written
 * @param tokens the control tokens {@code X-API-Key} is checked against
 * @param keys the issued keys {@code X-API-Key} is checked against
 * @param status the routes of a sandbox's metrics, logs and network
 * @param snapshots the snapshots of the sandboxes' workspaces
 */
record ControlPlaneRoutes(
    E2bSandboxes sandboxes,
    E2bAnswers answers,
    ControlTokens tokens,
    ApiKeys keys,
    SandboxStatusRoutes status,
    SandboxSnapshots snapshots) {
  static final String PREFIX = "/e2b";
  private static final String SANDBOX = PREFIX + "/sandboxes/{id}";
  private static final Set<String> STATES = Set.of("running", "paused");

  /** The seconds a resumed sandbox lives when a resume names no timeout, as E2B's default. */
  private static final long DEFAULT_RESUME_TIMEOUT = 15;

  /** The seconds a sandbox a connect resumes lives when it names no timeout, as E2B's default. */
  private static final long DEFAULT_CONNECT_TIMEOUT = 300;

  private SandboxViews views() {
    return new SandboxViews(answers.mapper());
  }

  void register(JavalinConfig config) {
    post(config, PREFIX + "/v2/sandboxes", this::create);
    post(config, PREFIX + "/sandboxes", this::create);
    get(config, PREFIX + "/v2/sandboxes", this::list);
    get(config, PREFIX + "/sandboxes", this::list);
    // Before the sandbox's own route, whose {id} it would otherwise be.
    get(config, PREFIX + "/sandboxes/metrics", status::batchMetrics);
    post(config, PREFIX + "/v2/sandboxes/{id}/connect", this::connect);
    post(config, SANDBOX + "/connect", this::connect);
    get(config, SANDBOX, this::detail);
    config.routes.delete(SANDBOX, ctx -> answers.control(ctx, this::authorize, this::kill));
    post(config, SANDBOX + "/timeout", this::setTimeout);
    post(config, SANDBOX + "/refreshes", this::refresh);
    post(config, SANDBOX + "/pause", this::pause);
    post(config, SANDBOX + "/resume", this::resume);
    post(config, SANDBOX + "/fork", this::fork);
    post(config, SANDBOX + "/snapshots", this::snapshot);
    get(config, PREFIX + "/snapshots", this::snapshots);
    config.routes.delete(
        PREFIX + "/templates/{id}",
        ctx -> answers.control(ctx, this::authorize, this::deleteSnapshot));
    config.routes.put(
        SANDBOX + "/network", ctx -> answers.control(ctx, this::authorize, status::network));
    get(config, SANDBOX + "/metrics", status::metrics);
    get(config, SANDBOX + "/logs", status::logs);
    get(config, PREFIX + "/v2/sandboxes/{id}/logs", status::logsV2);
  }

  private void post(JavalinConfig config, String path, E2bAnswers.Action action) {
    config.routes.post(path, ctx -> answers.control(ctx, this::authorize, action));
  }

  private void get(JavalinConfig config, String path, E2bAnswers.Action action) {
    config.routes.get(path, ctx -> answers.control(ctx, this::authorize, action));
  }

  /**
   * Refuses a request whose {@code X-API-Key} is neither a control token nor a key the server
   * issued; the key is never logged.
   */
  private void authorize(Context ctx) {
    String key = ctx.header("X-API-Key");
    if (!tokens.accepts(key) && !keys.accepts(key)) {
      throw new ApiError(
          401,
          key == null
              ? "missing API key: send Box's control token or an API key it issued as X-API-Key"
                  + " (E2B_API_KEY)"
              : "invalid API key");
    }
  }

  private void create(Context ctx) throws IOException {
    CreateRequest request = CreateRequest.read(Bodies.json(ctx, answers.mapper()));
    String sandboxId = Secrets.sandboxId();
    BoxSpec spec =
        request.spec(
            E2bSandbox.sessionIdOf(sandboxId),
            sandboxes.sessions().backendStatus().capabilities().contains(BoxCapabilities.IMAGES),
            snapshots::exists);
    sandboxes.sessions().createOrReuse(spec);
    Instant now = sandboxes.now();
    E2bSandbox sandbox =
        E2bSandbox.start(
            sandboxId,
            spec,
            now,
            request.timeoutSeconds(),
            request.templateId(),
            request.metadata(),
            request.envVars());
    sandboxes.add(sandbox);
    answers.json(ctx, 201, views().created(sandbox));
  }

  /** Forks a sandbox into {@code count} new ones (201, one result each). */
  private void fork(Context ctx) throws IOException {
    E2bSandbox source = sandbox(ctx);
    JsonNode body = Bodies.json(ctx, answers.mapper());
    answers.json(ctx, 201, new SandboxForks(sandboxes, views()).fork(source, body));
  }

  /** Takes a snapshot of a sandbox's workspace (201). */
  private void snapshot(Context ctx) throws IOException {
    E2bSandbox sandbox = sandbox(ctx);
    answers.json(ctx, 201, snapshots.take(sandbox, Bodies.json(ctx, answers.mapper())));
  }

  private void snapshots(Context ctx) throws JsonProcessingException {
    List<ObjectNode> all =
        snapshots.list(
            blankToNull(ctx.queryParam("sandboxID")), blankToNull(ctx.queryParam("name")));
    answers.json(ctx, 200, Pages.page(ctx, all, answers.mapper().createArrayNode()));
  }

  private static @Nullable String blankToNull(@Nullable String query) {
    return query == null || query.isEmpty() ? null : query;
  }

  /** Deletes a snapshot (204), which E2B addresses as a template; 404 when there is none. */
  private void deleteSnapshot(Context ctx) {
    snapshots.delete(ctx.pathParam("id"));
    ctx.status(204);
  }

  private void detail(Context ctx) throws JsonProcessingException {
    E2bSandbox sandbox = sandbox(ctx);
    answers.json(ctx, 200, views().detail(sandbox, sandboxes.paused(sandbox)));
  }

  /**
   * Connects to a sandbox, resuming it when paused (201, with the requested timeout from now); a
   * running one (200) has its end moved to the requested timeout when that is later.
   */
  private void connect(Context ctx) throws IOException {
    E2bSandbox sandbox = sandbox(ctx);
    JsonNode body = Bodies.json(ctx, answers.mapper());
    if (sandboxes.paused(sandbox)) {
      long timeout = CreateRequest.timeout(body.path("timeout"), DEFAULT_CONNECT_TIMEOUT);
      answers.json(ctx, 201, views().created(sandboxes.resume(sandbox, timeout)));
      return;
    }
    if (body.has("timeout")) {
      Instant end = sandboxes.now().plusSeconds(CreateRequest.timeout(body.get("timeout"), 0));
      if (end.isAfter(sandbox.endAt())) {
        sandbox = sandboxes.endAt(sandbox, end);
      }
    }
    answers.json(ctx, 200, views().created(sandbox));
  }

  /** Pauses a running sandbox (204); one paused already is E2B's conflict (409). */
  private void pause(Context ctx) {
    sandboxes.pause(sandbox(ctx));
    ctx.status(204);
  }

  /**
   * Resumes a paused sandbox (201), which then ends the requested timeout from now; a running one
   * is E2B's conflict (409).
   */
  private void resume(Context ctx) throws IOException {
    E2bSandbox sandbox = sandbox(ctx);
    if (!sandboxes.paused(sandbox)) {
      throw new ApiError(409, "sandbox " + sandbox.sandboxId() + " is already running");
    }
    long timeout =
        CreateRequest.timeout(
            Bodies.json(ctx, answers.mapper()).path("timeout"), DEFAULT_RESUME_TIMEOUT);
    answers.json(ctx, 201, views().created(sandboxes.resume(sandbox, timeout)));
  }

  private void list(Context ctx) throws JsonProcessingException {
    String metadata = ctx.queryParam("metadata");
    Map<String, String> filter = MetadataFilter.parse(metadata == null ? "" : metadata);
    Set<String> states = states(ctx.queryParam("state"));
    List<ObjectNode> matching =
        sandboxes.list().stream()
            .filter(s -> MetadataFilter.matches(filter, s.metadata()))
            .map(s -> views().listed(s, sandboxes.paused(s)))
            .filter(view -> states.contains(view.path("state").asText()))
            .toList();
    ArrayNode page = Pages.page(ctx, matching, answers.mapper().createArrayNode());
    answers.json(ctx, 200, page);
  }

  private static Set<String> states(@Nullable String query) {
    if (query == null || query.isEmpty()) {
      return STATES;
    }
    Set<String> states = Set.of(query.split(",", -1));
    for (String state : states) {
      if (!STATES.contains(state)) {
        throw ApiError.badRequest("state must be running or paused, not '" + state + "'");
      }
    }
    return states;
  }

  private void kill(Context ctx) {
    if (!sandboxes.kill(ctx.pathParam("id"))) {
      throw ApiError.notFound("sandbox " + ctx.pathParam("id") + " not found");
    }
    ctx.status(204);
  }

  /** Sets the sandbox's end to now plus the timeout, earlier or later than it was. */
  private void setTimeout(Context ctx) throws IOException {
    E2bSandbox sandbox = sandbox(ctx);
    JsonNode timeout = Bodies.json(ctx, answers.mapper()).path("timeout");
    if (timeout.isMissingNode()) {
      throw ApiError.badRequest("timeout is required");
    }
    sandboxes.endAt(sandbox, sandboxes.now().plusSeconds(CreateRequest.timeout(timeout, 0)));
    ctx.status(204);
  }

  /** Keeps the sandbox alive for {@code duration} seconds more from now, if that is later. */
  private void refresh(Context ctx) throws IOException {
    E2bSandbox sandbox = sandbox(ctx);
    JsonNode duration = Bodies.json(ctx, answers.mapper()).path("duration");
    long seconds = duration.isMissingNode() ? 0 : duration.asLong(-1);
    if (!duration.isMissingNode()
        && (!duration.isIntegralNumber() || seconds < 0 || seconds > 3600)) {
      throw ApiError.badRequest("duration must be 0 to 3600 seconds");
    }
    Instant end = sandboxes.now().plusSeconds(seconds);
    if (end.isAfter(sandbox.endAt())) {
      sandboxes.endAt(sandbox, end);
    }
    ctx.status(204);
  }

  private E2bSandbox sandbox(Context ctx) {
    return sandboxes.require(ctx.pathParam("id"));
  }
}
