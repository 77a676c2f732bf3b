package dev.box.server.http;

import dev.box.api.BoxValidationException;
import dev.box.api.internal.RelayProtocol;
import dev.box.api.internal.TerminalProtocol;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.session.ProcessManager;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.websocket.WsConfig;
import io.javalin.websocket.WsContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.websocket.api.Callback;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /v1/sessions/{id}/terminal?cols=C&rows=R}: a WebSocket on a terminal in the session's
 * sandbox ({@link TerminalRelay}). The terminal's shell starts before the upgrade, so that every
 * refusal (no token, a bad size, no such session, a backend without terminals) is an HTTP error
 * with the JSON error body; the socket the upgrade makes then takes it over. A shell that no socket
 * takes within {@link #CLAIM_WAIT} (the upgrade did not complete) is killed.
 */
final class TerminalRoutes {
  private static final String PATH = "/v1/sessions/{id}/terminal";

  /** The attribute of an upgrade: the key of its started shell. */
  private static final String KEY = "box.terminal";

  private static final Duration CLAIM_WAIT = Duration.ofSeconds(30);

  private final HttpApi api;
  private final ProcessManager processes;
  private final RelayMeter meter;
  private final ConcurrentHashMap<String, SandboxProcess> unclaimed = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, TerminalRelay> relays = new ConcurrentHashMap<>();

  TerminalRoutes(HttpApi api, RelayMeter meter) {
    this.api = api;
    this.processes = api.sessions().processes();
    this.meter = meter;
  }

  void register(JavalinConfig config) {
    config.routes.wsBeforeUpgrade(PATH, this::beforeUpgrade);
    config.routes.ws(PATH, this::socket);
  }

  /**
   * Checks the request and starts the shell; the token first, so that a stranger learns nothing.
   */
  private void beforeUpgrade(Context ctx) throws IOException {
    try {
      api.authenticate(ctx);
      ProcessSpec.Terminal size =
          new ProcessSpec.Terminal(
              dimension(ctx, "cols", TerminalProtocol.DEFAULT_COLS),
              dimension(ctx, "rows", TerminalProtocol.DEFAULT_ROWS));
      SandboxProcess shell = processes.openTerminal(ctx.pathParam("id"), size);
      hold(ctx, shell);
    } catch (RuntimeException e) {
      ErrorMapper.refuseUpgrade(ctx, e);
    }
  }

  private void hold(Context ctx, SandboxProcess shell) {
    String key = UUID.randomUUID().toString();
    unclaimed.put(key, shell);
    ctx.attribute(KEY, key);
    CompletableFuture.delayedExecutor(CLAIM_WAIT.toMillis(), TimeUnit.MILLISECONDS)
        .execute(
            () -> {
              SandboxProcess left = unclaimed.remove(key);
              if (left != null) {
                left.killTree();
                left.release();
              }
            });
  }

  private void socket(WsConfig ws) {
    ws.onConnect(
        ctx -> {
          ctx.enableAutomaticPings(30, TimeUnit.SECONDS);
          SandboxProcess shell = claim(ctx);
          if (shell == null) {
            ctx.session.close(
                RelayProtocol.INTERNAL_ERROR,
                "the terminal's shell was given up before the socket opened",
                Callback.NOOP);
            return;
          }
          TerminalRelay relay = new TerminalRelay(shell, ctx.session, meter);
          relays.put(ctx.sessionId(), relay);
          relay.start();
        });
    ws.onMessage(
        ctx -> {
          TerminalRelay relay = relays.get(ctx.sessionId());
          if (relay != null) {
            relay.onText(ctx.message());
          }
        });
    ws.onBinaryMessage(
        ctx -> {
          TerminalRelay relay = relays.get(ctx.sessionId());
          if (relay != null) {
            ByteBuffer data = ctx.data().duplicate();
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            relay.onBinary(bytes);
          }
        });
    ws.onClose(ctx -> stop(ctx.sessionId()));
    ws.onError(ctx -> stop(ctx.sessionId()));
  }

  private @Nullable SandboxProcess claim(WsContext ctx) {
    String key = ctx.attribute(KEY);
    return key == null ? null : unclaimed.remove(key);
  }

  private void stop(String socketId) {
    TerminalRelay relay = relays.remove(socketId);
    if (relay != null) {
      relay.stop();
    }
  }

  /** The query parameter {@code name}: a width or height, {@code fallback} when absent. */
  private static int dimension(Context ctx, String name, int fallback) {
    String value = ctx.queryParam(name);
    if (value == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(value.strip());
      if (n >= 1 && n <= ProcessSpec.Terminal.MAX) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Falls through to the message.
    }
    throw new BoxValidationException(
        name
            + " must be an integer from 1 to "
            + ProcessSpec.Terminal.MAX
            + ", not '"
            + value
            + "'");
  }
}
