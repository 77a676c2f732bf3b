package dev.box.e2b.server;

import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Who an envd request is for: the sandbox named by {@code E2b-Sandbox-Id} (or by a {@code Host} of
 * the form {@code 49983-<id>.<domain>}), checked against its {@code X-Access-Token}, and the user
 * it names; a {@code /files} request may carry instead the signature of a URL the SDK signed with
 * that token ({@link FileSignatures}). Only E2B's default user {@code user}, the sandbox user, is
 * served: Box runs no process as root in a sandbox.
 *
 * @param sandboxes where each request's sandbox is found
 */
record EnvdCaller(E2bSandboxes sandboxes) {
  /** E2B's default user, the sandbox user, whose home is {@code /home/user}. */
  static final String USER = "user";

  private static final Pattern HOST = Pattern.compile("49983-([a-z0-9]+)\\..*");
  private static final String BASIC = "basic ";

  /** envd's file route, also served at the root for the SDK's signed URLs. */
  static final String FILES = "/files";

  /**
   * The sandbox {@code ctx} is for, its token checked.
   *
   * @throws ApiError 400 without a sandbox id, 502 for an unknown or killed sandbox, 401 without
   *     the sandbox's access token
   */
  E2bSandbox sandbox(Context ctx) {
    String id = sandboxId(ctx);
    String token = ctx.header("X-Access-Token");
    if (token == null && ctx.queryParam("signature") != null && isFiles(ctx)) {
      return FileSignatures.verify(
          ctx, id == null ? sandboxes.list() : List.of(live(id)), sandboxes.now());
    }
    if (id == null) {
      throw ApiError.badRequest("the E2b-Sandbox-Id header is required");
    }
    E2bSandbox sandbox = live(id);
    if (!Secrets.same(sandbox.accessToken(), token)) {
      throw new ApiError(
          401, token == null ? "missing X-Access-Token" : "invalid X-Access-Token for " + id);
    }
    return sandbox;
  }

  private E2bSandbox live(String id) {
    E2bSandbox sandbox = sandboxes.find(id);
    if (sandbox == null) {
      throw new ApiError(502, "sandbox " + id + " is not running");
    }
    return sandbox;
  }

  /** Whether {@code ctx} is envd's {@code /files}, which a signed URL may reach. */
  private static boolean isFiles(Context ctx) {
    return ctx.path().equals(FILES) || ctx.path().equals(EnvdRoutes.PREFIX + FILES);
  }

  /** Checks the user of an RPC, sent as {@code Authorization: Basic base64(user:)}. */
  static void checkRpcUser(Context ctx) {
    String authorization = ctx.header("Authorization");
    if (authorization == null) {
      return;
    }
    if (!authorization.regionMatches(true, 0, BASIC, 0, BASIC.length())) {
      throw ConnectError.invalidArgument("Authorization must be Basic base64(<user>:)");
    }
    String decoded;
    try {
      decoded =
          new String(
              Base64.getDecoder().decode(authorization.substring(BASIC.length()).strip()),
              StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw ConnectError.invalidArgument("Authorization must be Basic base64(<user>:)");
    }
    int colon = decoded.indexOf(':');
    checkUser(colon < 0 ? decoded : decoded.substring(0, colon));
  }

  /** Checks a user name: {@code user} is served, {@code root} and others are refused. */
  static void checkUser(@Nullable String user) {
    if (user == null || user.isEmpty() || user.equals(USER)) {
      return;
    }
    if (user.equals("root")) {
      throw new ApiError(
          403,
          "user 'root' is not available: Box runs every sandbox process as the sandbox user"
              + " ('user'), on every backend");
    }
    throw ApiError.badRequest("unknown user '" + user + "': the sandbox has the user 'user'");
  }

  private static @Nullable String sandboxId(Context ctx) {
    String id = ctx.header("E2b-Sandbox-Id");
    if (id != null && !id.isBlank()) {
      return id.strip();
    }
    String host = ctx.header("Host");
    if (host != null) {
      Matcher matcher = HOST.matcher(host);
      if (matcher.matches()) {
        return matcher.group(1);
      }
    }
    return null;
  }
}
