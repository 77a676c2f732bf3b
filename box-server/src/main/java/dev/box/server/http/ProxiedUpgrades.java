package dev.box.server.http;

import dev.box.api.internal.RelayProtocol;
import io.javalin.http.Context;
import io.javalin.websocket.WsContext;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.websocket.api.Callback;
import org.jspecify.annotations.Nullable;

/**
 * The upstreams opened for relay upgrades another replica serves ({@link RelayProxy}), from the
 * check before the upgrade until the client's socket claims its own. One that no socket claims
 * within {@link #ATTACH_WAIT} (the upgrade did not complete) is given up, so that it does not keep
 * the process's attachment on the replica that holds it.
 */
final class ProxiedUpgrades {
  /** The attribute of a proxied upgrade: the key of its upstream. */
  private static final String KEY = "box.relay-proxy";

  private static final Duration ATTACH_WAIT = Duration.ofSeconds(30);

  private final ConcurrentHashMap<String, RelayProxy> pending = new ConcurrentHashMap<>();

  /** Keeps {@code proxy} for the socket that the upgrade {@code ctx} makes. */
  void hold(Context ctx, RelayProxy proxy) {
    String key = UUID.randomUUID().toString();
    pending.put(key, proxy);
    ctx.attribute(KEY, key);
    CompletableFuture.delayedExecutor(ATTACH_WAIT.toMillis(), TimeUnit.MILLISECONDS)
        .execute(
            () -> {
              RelayProxy unclaimed = pending.remove(key);
              if (unclaimed != null) {
                unclaimed.abandon();
              }
            });
  }

  /** Whether the socket {@code ctx} comes of a proxied upgrade. */
  static boolean proxied(WsContext ctx) {
    return ctx.attribute(KEY) != null;
  }

  /**
   * The upstream of the proxied socket {@code ctx}, attached to it; null, the socket closed, when
   * it was given up.
   */
  @Nullable RelayProxy claim(WsContext ctx) {
    String key = ctx.attribute(KEY);
    RelayProxy proxy = key == null ? null : pending.remove(key);
    if (proxy == null) {
      ctx.session.close(
          RelayProtocol.INTERNAL_ERROR,
          "the relay of the replica that holds the process was given up",
          Callback.NOOP);
      return null;
    }
    proxy.attach(ctx.session);
    return proxy;
  }
}
