package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxBackendHealth;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxJson;
import dev.box.api.BoxRuntimeStatus;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.auth.ControlTokens;
import dev.box.core.backend.BackendStatus;
import dev.box.core.session.SessionManager;
import dev.box.core.settings.RuntimeLimits;
import dev.box.e2b.server.E2bApi;
import dev.box.langbot.ControlAuth;
import dev.box.langbot.LangBotControl;
import dev.box.server.metrics.BoxMetrics;
import dev.box.server.ports.PreviewLinks;
import io.javalin.Javalin;
import io.javalin.http.Context;
import jakarta.servlet.DispatcherType;
import java.io.IOException;
import java.time.Clock;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.VirtualThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The REST API of Box on Javalin: thin handlers over {@link SessionManager}, the control-token
 * check, and JSON errors for every failure, unknown route and wrong method.
 */
public final class HttpApi {
  private static final String ERROR_SET = "box.error-set";
  private static final long MAX_REQUEST_BYTES = 16L * 1024 * 1024;

  private static final String BEARER = "bearer ";
  private static final String ANY_PATH = "*";
  private static final String ANY_PATH_PATTERN = "/*";

  private final SessionManager sessions;
  private final ControlTokens tokens;
  private final LangBotControl langbot;
  private final boolean metricsOpen;
  private final ObjectMapper mapper = BoxJson.newMapper();
  private final ClientDisconnects disconnects = new ClientDisconnects();

  private HttpApi(
      SessionManager sessions, ControlTokens tokens, LangBotControl langbot, boolean metricsOpen) {
    this.sessions = sessions;
    this.tokens = tokens;
    this.langbot = langbot;
    this.metricsOpen = metricsOpen;
  }

  /**
   * Creates the (not yet started) HTTP server.
   *
   * @param sessions the sessions it serves
   * @param tokens the tokens every route but /healthz and /readyz requires, unknown routes
   *     included; LangBot's routes check the same ones through {@code langbot}
   * @param version the version reported by /healthz
   * @param langbot LangBot's control plane, served on /rpc/ws and checked by the relay
   */
  public static Javalin create(
      SessionManager sessions, ControlTokens tokens, String version, LangBotControl langbot) {
    return create(
        sessions,
        tokens,
        version,
        langbot,
        null,
        false,
        List.of(),
        null,
        PreviewLinks.ephemeral(Clock.systemUTC()));
  }

  /**
   * Creates the (not yet started) HTTP server with /metrics (when {@code metrics} is given) and
   * {@code mounts} added to it, each behind the control-token check.
   *
   * @param metrics what /metrics serves and the relay counts into; null: no /metrics route
   * @param metricsOpen whether /metrics answers without a token
   * @param mounts servlets added at exact paths
   * @param replicaToken the control token sent with the requests forwarded to the other replicas of
   *     the tenant, where the backend shares its sessions; null when the API is open
   * @param previews the preview links of the sandboxes' ports
   * @see #create(SessionManager, ControlTokens, String, LangBotControl)
   */
  public static Javalin create(
      SessionManager sessions,
      ControlTokens tokens,
      String version,
      LangBotControl langbot,
      @Nullable BoxMetrics metrics,
      boolean metricsOpen,
      List<HttpMount> mounts,
      @Nullable String replicaToken,
      PreviewLinks previews) {
    HttpApi api = new HttpApi(sessions, tokens, langbot, metricsOpen);
    PortRoutes ports = PortRoutes.of(api, previews);
    RelayMeter meter =
        metrics == null
            ? RelayMeter.NONE
            : new RelayMeter(metrics::relayedStdin, metrics::relayedStdout);
    return Javalin.create(
        config -> {
          QueuedThreadPool pool = new QueuedThreadPool(32, 4);
          pool.setName("box-http");
          VirtualThreadPool virtual = new VirtualThreadPool();
          virtual.setName("box-http-vt");
          virtual.setMaxConcurrentTasks(4096);
          pool.setVirtualThreadsExecutor(virtual);
          config.jetty.threadPool = pool;
          config.jetty.modifyServer(server -> server.setErrorHandler(new JsonErrorHandler()));
          config.jetty.modifyWebSocketServletFactory(
              factory -> {
                factory.setMaxTextMessageSize(MAX_REQUEST_BYTES);
                factory.setMaxBinaryMessageSize(MAX_REQUEST_BYTES);
                factory.setIdleTimeout(java.time.Duration.ofMinutes(5));
              });
          config.jetty.modifyServletContextHandler(
              handler -> {
                mount(handler, mounts, api);
                FilterHolder relay = new FilterHolder(ports);
                relay.setAsyncSupported(true);
                handler.addFilter(relay, ANY_PATH_PATTERN, EnumSet.of(DispatcherType.REQUEST));
              });
          config.startup.showJavalinBanner = false;
          config.startup.showOldJavalinVersionWarning = false;
          config.http.maxRequestSize = MAX_REQUEST_BYTES;
          config.http.prefer405over404 = true;
          config.routes.before(api::authenticate);
          config.routes.get("/healthz", ctx -> api.healthz(ctx, version));
          config.routes.get("/readyz", api::readyz);
          config.routes.get("/v1/health", ctx -> api.json(ctx, 200, api.health()));
          config.routes.get("/v1/status", api::status);
          config.routes.get("/v1/sessions", ctx -> api.json(ctx, 200, sessions.list()));
          if (metrics != null) {
            config.routes.get("/metrics", ctx -> scrape(ctx, metrics));
          }
          ProcessRoutes processRoutes =
              new ProcessRoutes(api, meter, new Peers(sessions, replicaToken));
          config.routes.get(
              "/v1/sessions/{id}",
              ctx -> api.json(ctx, 200, processRoutes.sessionWithProcesses(ctx)));
          config.routes.post("/v1/sessions/{id}", api::createSession);
          config.routes.delete("/v1/sessions/{id}", api::deleteSession);
          config.routes.post("/v1/sessions/{id}/exec", api::exec);
          processRoutes.register(config);
          new PauseRoutes(api, sessions, processRoutes::sessionWithProcesses).register(config);
          new ForkRoutes(api, sessions.forks()).register(config);
          new TerminalRoutes(api, meter).register(config);
          ports.register(config);
          new FileRoutes(sessions.files(), api).register(config);
          new ControlRoutes(langbot).register(config);
          E2bApi.register(config, sessions, tokens);
          // Last, so that it serves only upgrades no other WebSocket route matched.
          config.routes.wsBeforeUpgrade(ANY_PATH, api::refuseUnknownUpgrade);
          config.routes.ws(ANY_PATH, ws -> {});
          config.routes.exception(
              Exception.class, (e, ctx) -> api.fail(ctx, ErrorMapper.toBoxException(e)));
          config.routes.error(
              404,
              ctx ->
                  api.unlessSet(
                      ctx, BoxErrorCode.NOT_FOUND, "no route " + ctx.method() + " " + ctx.path()));
          config.routes.error(
              405,
              ctx ->
                  api.unlessSet(
                      ctx,
                      BoxErrorCode.METHOD_NOT_ALLOWED,
                      "method " + ctx.method() + " is not allowed on " + ctx.path()));
        });
  }

  /** The sessions this API serves. */
  SessionManager sessions() {
    return sessions;
  }

  /** The mapper of every JSON body this API reads and writes. */
  ObjectMapper mapper() {
    return mapper;
  }

  /** LangBot's control plane, whose relays the process routes check. */
  LangBotControl langbot() {
    return langbot;
  }

  /**
   * Refuses a request without one of the control tokens, as {@code Authorization: Bearer <token>}
   * or LangBot's {@code X-LangBot-Box-Control-Token}; only the probes need none, and {@code
   * /metrics} when {@code metrics_open} is set, and E2B's routes, which check E2B's credentials
   * themselves ({@link E2bApi}). The message names neither the token nor where the server keeps it.
   */
  void authenticate(Context ctx) {
    authenticate(ctx.path(), ctx::header);
  }

  /**
   * Adds each mount as a servlet at its exact path, which takes precedence over the framework's
   * servlet at {@code /*} and so bypasses its before-handlers: a filter on the same path applies
   * {@link #authenticate(String, Function)} instead.
   */
  private static void mount(ServletContextHandler handler, List<HttpMount> mounts, HttpApi api) {
    for (HttpMount mount : mounts) {
      ServletHolder servlet = new ServletHolder(mount.servlet());
      servlet.setAsyncSupported(true);
      handler.addServlet(servlet, mount.path());
      FilterHolder guard = new FilterHolder(new MountGuard(api::authenticate));
      guard.setAsyncSupported(true);
      handler.addFilter(guard, mount.path(), EnumSet.of(DispatcherType.REQUEST));
    }
  }

  /**
   * The check of {@link #authenticate(Context)} for a request to {@code path} whose headers {@code
   * header} reads.
   *
   * @throws BoxException when the request must be refused, with the error to answer
   */
  void authenticate(String path, Function<String, @Nullable String> header) {
    requireWellFormedEscapes(path);
    if ((path.startsWith("/v1/sessions") || path.startsWith("/v1/snapshots"))
        && langbot.admissionRequired()) {
      // LangBot's grant-enforced mode admits sandboxes Workspace by Workspace, through its
      // control channel only: the REST API holds no grant, so it runs none.
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "LangBot's sandbox admission is required (box.admission.required): sessions run only"
              + " through admitted control-channel actions");
    }
    if (!tokens.required()
        || path.equals("/healthz")
        || path.equals("/readyz")
        || E2bApi.owns(path)
        || (metricsOpen && path.equals("/metrics"))) {
      return;
    }
    String presented = header.apply(ControlAuth.TOKEN_HEADER);
    String authorization = header.apply("Authorization");
    if (presented == null
        && authorization != null
        && authorization.length() > BEARER.length()
        && authorization.substring(0, BEARER.length()).toLowerCase(Locale.ROOT).equals(BEARER)) {
      presented = authorization.substring(BEARER.length()).strip();
    }
    if (!tokens.accepts(presented)) {
      throw new BoxException(
          BoxErrorCode.UNAUTHORIZED,
          presented == null
              ? "missing control token: send it as 'Authorization: Bearer <token>'"
              : "invalid control token");
    }
  }

  /**
   * Refuses a path with a {@code %} that is not followed by two hex digits before a route decodes
   * its parameters, which would otherwise fail as an internal error.
   */
  private static void requireWellFormedEscapes(String path) {
    for (int i = path.indexOf('%'); i >= 0; i = path.indexOf('%', i + 1)) {
      if (i + 2 >= path.length()
          || Character.digit(path.charAt(i + 1), 16) < 0
          || Character.digit(path.charAt(i + 2), 16) < 0) {
        throw new BoxValidationException(
            "malformed request: the path has a '%' that is not followed by two hex digits");
      }
    }
  }

  /**
   * Refuses a WebSocket upgrade to a path no WebSocket route serves, as an unknown HTTP route is
   * refused: 401 without a token, else 404, with a JSON error (the framework would answer an HTML
   * 404 before any check).
   */
  private void refuseUnknownUpgrade(Context ctx) throws IOException {
    // The first endpoint is the WebSocket route the upgrade matched; later ones are its handlers.
    if (!ctx.endpoints().list().getFirst().path.equals(ANY_PATH)) {
      return;
    }
    BoxException error;
    try {
      authenticate(ctx);
      error = new BoxException(BoxErrorCode.NOT_FOUND, "no WebSocket route " + ctx.path());
    } catch (BoxException e) {
      error = e;
    }
    ErrorMapper.refuseUpgrade(ctx, error);
  }

  /** Prometheus' text format, or OpenMetrics when the scraper's Accept header asks for it. */
  private static void scrape(Context ctx, BoxMetrics metrics) {
    BoxMetrics.Scrape scrape = metrics.scrape(ctx.header("Accept"));
    ctx.status(200).contentType(scrape.contentType()).result(scrape.body());
  }

  private BoxBackendHealth health() {
    BackendStatus status = sessions.backendStatus();
    return new BoxBackendHealth(
        status.name(),
        status.available(),
        status.reason(),
        status.enforced(),
        status.capabilities().stream().sorted().toList(),
        sessions.backendChoice().notChosen());
  }

  private void healthz(Context ctx, String version) throws JsonProcessingException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("live", true);
    body.put("version", version);
    body.put("resources", resources());
    json(ctx, 200, body);
  }

  /** Cheap counters for /healthz and /readyz. */
  private Map<String, Object> resources() {
    Map<String, Object> resources = new LinkedHashMap<>();
    resources.put("sessions", sessions.size());
    resources.put("managed_processes", sessions.processes().running());
    return resources;
  }

  private void readyz(Context ctx) throws JsonProcessingException {
    JsonNode strict = langbot.admissionReadiness();
    if (strict instanceof ObjectNode report) {
      report.set("resources", mapper.valueToTree(resources()));
      json(ctx, report.path("ready").asBoolean(false) ? 200 : 503, report);
      return;
    }
    BoxBackendHealth health = health();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("ready", health.available());
    body.put("mode", "standard");
    body.put(
        "backend", Map.of("name", String.valueOf(health.name()), "available", health.available()));
    body.put("checks", Map.of("backend_available", health.available()));
    body.put("resources", resources());
    json(ctx, health.available() ? 200 : 503, body);
  }

  private void status(Context ctx) throws JsonProcessingException {
    Map<String, Object> limits = new LinkedHashMap<>();
    limits.put(RuntimeLimits.MAX_SESSIONS.key(), sessions.config().maxSessions());
    limits.put(RuntimeLimits.MAX_OUTPUT_BYTES.key(), sessions.config().maxOutputBytes());
    limits.put(RuntimeLimits.MAX_FILE_BYTES.key(), sessions.config().files().maxFileBytes());
    limits.put(RuntimeLimits.MAX_ARCHIVE_BYTES.key(), sessions.config().files().maxArchiveBytes());
    limits.put(
        RuntimeLimits.MAX_ARCHIVE_ENTRIES.key(), sessions.config().files().maxArchiveEntries());
    limits.put(
        "allowed_mount_roots",
        sessions.config().allowedMountRoots().stream().map(Object::toString).toList());
    json(
        ctx,
        200,
        new BoxRuntimeStatus(
            health(),
            sessions.size(),
            sessions.processes().running(),
            sessions.config().sessionTtl().toSeconds(),
            limits));
  }

  private void createSession(Context ctx) throws JsonProcessingException {
    SessionManager.Acquired acquired = sessions.createOrReuse(spec(ctx));
    json(ctx, acquired.created() ? 201 : 200, acquired.info());
  }

  private void deleteSession(Context ctx) throws JsonProcessingException {
    String id = ctx.pathParam("id");
    sessions.delete(id);
    json(ctx, 200, Map.of("deleted", id));
  }

  /** An exec, answered with its result, or as it runs when asked ({@link StreamedExec}). */
  private void exec(Context ctx) throws IOException {
    BoxSpec spec = spec(ctx);
    if (StreamedExec.wanted(ctx.header("Accept"))) {
      StreamedExec.run(ctx.req(), ctx.res(), mapper, disconnects, sessions, spec);
    } else {
      json(ctx, 200, sessions.exec(spec));
    }
  }

  /** The request body as a {@link BoxSpec}, with the session id taken from the path. */
  private BoxSpec spec(Context ctx) throws JsonProcessingException {
    String body = ctx.body();
    JsonNode node = body.isBlank() ? mapper.createObjectNode() : mapper.readTree(body);
    if (!(node instanceof ObjectNode object)) {
      throw new BoxValidationException("request body must be a JSON object");
    }
    object.put("session_id", ctx.pathParam("id"));
    return mapper.treeToValue(object, BoxSpec.class);
  }

  void json(Context ctx, int status, Object body) throws JsonProcessingException {
    ctx.status(status).contentType("application/json").result(mapper.writeValueAsString(body));
  }

  private void fail(Context ctx, BoxException e) {
    ctx.attribute(ERROR_SET, true);
    ErrorMapper.answer(ctx, e);
  }

  /** Answers {@code code} unless a route answered its own error (E2B's routes always do). */
  private void unlessSet(Context ctx, BoxErrorCode code, String message) {
    if (ctx.attribute(ERROR_SET) == null && !E2bApi.owns(ctx.path())) {
      fail(ctx, new BoxException(code, message));
    }
  }
}
