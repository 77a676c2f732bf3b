package dev.box.e2b.server;

import com.fasterxml.jackson.databind.ObjectMapper;
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
  private final SessionManager sessions;
  private final ControlTokens tokens;

  /**
   * @param sessions the sessions the sandboxes are
   * @param tokens the control tokens the control plane accepts as {@code X-API-Key}
   */
  public E2bApi(SessionManager sessions, ControlTokens tokens) {
    this.sessions = sessions;
    this.tokens = tokens;
  }

  /** Whether {@code path} is one of E2B's, which checks its own credentials. */
  public static boolean owns(String path) {
    return path.equals(ControlPlaneRoutes.PREFIX)
        || path.startsWith(ControlPlaneRoutes.PREFIX + "/");
  }

  /**
   * Adds the routes to {@code config}; the sandboxes' timers stop when the server stops. Any other
   * path under {@code /e2b} answers E2B's 404.
   */
  public void register(JavalinConfig config) {
    ObjectMapper mapper = BoxJson.newMapper();
    E2bAnswers answers = new E2bAnswers(mapper);
    E2bSandboxes sandboxes = new E2bSandboxes(sessions);
    EnvdCaller caller = new EnvdCaller(sandboxes);
    new ControlPlaneRoutes(sessions, sandboxes, answers, tokens, mapper).register(config);
    new EnvdRoutes(
            caller,
            new FilesystemRpc(new SandboxScripts(sessions), mapper),
            new FileTransfer(
                sessions.files(),
                caller,
                mapper,
                answers,
                sessions.config().dataDir().resolve("e2b-uploads")),
            answers,
            mapper)
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
  }
}
