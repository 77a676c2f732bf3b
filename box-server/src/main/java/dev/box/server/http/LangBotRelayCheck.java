package dev.box.server.http;

import dev.box.langbot.ControlAuth;
import dev.box.langbot.LangBotControl;
import dev.box.langbot.Tenancy;
import io.javalin.http.Context;
import java.util.regex.Pattern;

/**
 * The relay's pre-upgrade checks for LangBot, as LangBot's own Box runtime makes them before it
 * upgrades a relay connection: token, pinned instance, Workspace, current placement generation, and
 * a session id inside that generation's namespace. They apply when the request carries LangBot
 * headers or a LangBot token is configured, so plain REST clients keep Box's own rules.
 */
final class LangBotRelayCheck {
  private static final Pattern CANONICAL_INT = Pattern.compile("[1-9][0-9]{0,17}");
  private static final int MAX_WORKSPACE_CHARS = 256;

  private LangBotRelayCheck() {}

  static boolean applies(Context ctx, LangBotControl langbot) {
    return langbot.auth().langbotTokenConfigured()
        || ctx.header(ControlAuth.INSTANCE_HEADER) != null
        || ctx.header(ControlAuth.WORKSPACE_HEADER) != null
        || ctx.header(ControlAuth.GENERATION_HEADER) != null;
  }

  static boolean allows(Context ctx, LangBotControl langbot) {
    if (langbot.admissionRequired()) {
      // Grant-enforced mode allows no managed process, so there is nothing to relay.
      return false;
    }
    ControlAuth auth = langbot.auth();
    String instance = ctx.header(ControlAuth.INSTANCE_HEADER);
    String workspace = ctx.header(ControlAuth.WORKSPACE_HEADER);
    String generation = ctx.header(ControlAuth.GENERATION_HEADER);
    if (!auth.acceptsToken(ctx.header(ControlAuth.TOKEN_HEADER))
        || instance == null
        || !auth.isTrusted(instance)
        || workspace == null
        || workspace.isEmpty()
        || workspace.length() > MAX_WORKSPACE_CHARS
        || generation == null
        || !CANONICAL_INT.matcher(generation).matches()) {
      return false;
    }
    long gen = Long.parseLong(generation);
    return langbot.tenancy().isCurrent(instance, workspace, gen)
        && ctx.pathParam("id").startsWith(Tenancy.prefix(instance, workspace, gen));
  }
}
