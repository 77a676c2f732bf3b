package dev.box.e2b.server;

import dev.box.api.BoxJson;
import dev.box.core.auth.ControlTokens;
import dev.box.core.session.SessionManager;
import io.javalin.config.JavalinConfig;

/**
 * E2B's API on Box's HTTP port, under {@code /e2b}: the control plane ({@code
 * E2B_API_URL=http://HOST:PORT/e2b}) and envd ({@code E2B_SANDBOX_URL=http://HOST:PORT/e2b/envd}).
 * A sandbox is an ordinary Box session on the server's backend. These routes take E2B's credentials
 * (the control token as {@code X-API-Key}; each sandbox's envd access token) instead of the Bearer
 * token, so the server's own check must let {@link #owns(String) their paths} pass.
 */
public final class E2bApi {
  private static final String KEYS_FILE = "e2b-api-keys.json";

  private E2bApi() {}

  /**
   * Whether {@code path} is one of E2B's, which checks its own credentials: {@code /e2b} and what
   * is under it, and {@code /files}, where the SDK's signed URLs land.
   */
  public static boolean owns(String path) {
    return path.equals(EnvdCaller.FILES)
        || path.equals(ControlPlaneRoutes.PREFIX)
        || path.startsWith(ControlPlaneRoutes.PREFIX + "/");
  }

  /**
   * Adds the routes to {@code config}; the sandboxes' timers stop when the server stops. Any other
   * path under {@code /e2b} answers E2B's 404.
   *
   * @param sessions the sessions the sandboxes are
   * @param tokens the control tokens the control plane accepts as {@code X-API-Key}, beside the API
   *     keys the server issues (kept in its state directory)
   */
  public static void register(JavalinConfig config, SessionManager sessions, ControlTokens tokens) {
    E2bAnswers answers = new E2bAnswers(BoxJson.newMapper());
    E2bSandboxes sandboxes =
        new E2bSandboxes(
            sessions, new SandboxRecords(sessions.config().dataDir(), answers.mapper()));
    ApiKeys keys = ApiKeys.open(sessions.config().dataDir().resolve(KEYS_FILE), answers.mapper());
    new ApiKeyRoutes(keys, answers.mapper(), sessions.clock()).register(config);
    SandboxStatusRoutes status =
        new SandboxStatusRoutes(sandboxes, answers, new SandboxMetrics(sessions, answers.mapper()));
    SandboxSnapshots snapshots = new SandboxSnapshots(sessions.forks(), answers.mapper());
    new ControlPlaneRoutes(sandboxes, answers, tokens, keys, status, snapshots).register(config);
    ProcessRpc processes = new ProcessRpc(sessions.processes(), answers.mapper(), sessions.clock());
    new EnvdRoutes(
            sandboxes, answers, processes, sessions.config().dataDir().resolve("e2b-uploads"))
        .register(config);
    String any = ControlPlaneRoutes.PREFIX + "/*";
    E2bAnswers.Action none =
        ctx -> {
          throw ApiError.notFound("no route " + ctx.method() + " " + ctx.path());
        };
    config.routes.get(any, ctx -> answers.control(ctx, c -> {}, none));
    config.routes.post(any, ctx -> answers.control(ctx, c -> {}, none));
    config.routes.put(any, ctx -> answers.control(ctx, c -> {}, none));
    config.routes.delete(any, ctx -> answers.control(ctx, c -> {}, none));
    config.routes.patch(any, ctx -> answers.control(ctx, c -> {}, none));
    config.events.serverStopping(sandboxes::close);
    config.events.serverStopping(processes::close);
  }
}
