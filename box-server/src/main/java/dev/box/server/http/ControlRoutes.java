package dev.box.server.http;

import dev.box.langbot.ControlAuth;
import dev.box.langbot.ControlConnection;
import dev.box.langbot.LangBotControl;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;

/**
 * LangBot's action-RPC control channel on {@code /rpc/ws}: the pre-upgrade token and instance
 * checks, and one {@link ControlConnection} per socket.
 */
final class ControlRoutes {
  static final String PATH = "/rpc/ws";

  private final LangBotControl control;
  private final ConcurrentHashMap<String, ControlConnection> connections =
      new ConcurrentHashMap<>();

  ControlRoutes(LangBotControl control) {
    this.control = control;
  }

  void register(JavalinConfig config) {
    config.routes.wsBeforeUpgrade(PATH, this::beforeUpgrade);
    config.routes.ws(
        PATH,
        ws -> {
          ws.onConnect(
              ctx -> {
                ctx.enableAutomaticPings(30, TimeUnit.SECONDS);
                Session socket = ctx.session;
                connections.put(ctx.sessionId(), control.open(text -> send(socket, text)));
              });
          ws.onMessage(
              ctx -> {
                ControlConnection connection = connections.get(ctx.sessionId());
                if (connection != null) {
                  connection.onText(ctx.message());
                }
              });
          ws.onClose(ctx -> close(ctx.sessionId()));
          ws.onError(ctx -> close(ctx.sessionId()));
        });
  }

  private void beforeUpgrade(Context ctx) throws IOException {
    ControlAuth auth = control.auth();
    if (!auth.acceptsToken(ctx.header(ControlAuth.TOKEN_HEADER))
        || !auth.admit(ctx.header(ControlAuth.INSTANCE_HEADER))) {
      ErrorMapper.refuseLangBotUnauthorized(ctx);
    }
  }

  private static void send(Session socket, String text) throws IOException {
    Callback.Completable done = new Callback.Completable();
    socket.sendText(text, done);
    try {
      done.get(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while sending");
    } catch (ExecutionException | TimeoutException e) {
      throw new IOException("cannot send on /rpc/ws: " + e, e);
    }
  }

  private void close(String socketId) {
    ControlConnection connection = connections.remove(socketId);
    if (connection != null) {
      connection.close();
    }
  }
}
