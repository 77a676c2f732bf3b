package dev.box.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.process.ManagedProcess;
import dev.box.core.session.ProcessManager;
import dev.box.core.session.SessionManager;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.websocket.WsConfig;
import io.javalin.websocket.WsContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/** The managed-process routes and the stdio relay WebSocket. */
final class ProcessRoutes {
  private static final String BASE = "/v1/sessions/{id}/managed-process";

  private final HttpApi api;
  private final SessionManager sessions;
  private final ProcessManager processes;
  private final ObjectMapper mapper;
  private final RelayMeter meter;
  private final ConcurrentHashMap<String, Relay> relays = new ConcurrentHashMap<>();

  /** The routes of {@code api}, over its sessions, its mapper and its LangBot control plane. */
  ProcessRoutes(HttpApi api, RelayMeter meter) {
    this.api = api;
    this.sessions = api.sessions();
    this.processes = sessions.processes();
    this.mapper = api.mapper();
    this.meter = meter;
  }

  void register(JavalinConfig config) {
    config.routes.post(BASE, this::start);
    config.routes.get(BASE, ctx -> api.json(ctx, 200, processes.get(id(ctx), defaultId())));
    config.routes.get(BASE + "/{pid}", ctx -> api.json(ctx, 200, processes.get(id(ctx), pid(ctx))));
    config.routes.delete(BASE + "/{pid}", this::stop);
    config.routes.wsBeforeUpgrade(BASE + "/{pid}/ws", ctx -> beforeUpgrade(ctx, pid(ctx)));
    config.routes.wsBeforeUpgrade(BASE + "/ws", ctx -> beforeUpgrade(ctx, defaultId()));
    config.routes.ws(BASE + "/{pid}/ws", ws -> relay(ws, c -> c.pathParam("pid")));
    config.routes.ws(BASE + "/ws", ws -> relay(ws, c -> defaultId()));
  }

  /** The session as {@code GET /v1/sessions/{id}} shows it: with its managed processes. */
  JsonNode sessionWithProcesses(String id) {
    ObjectNode node = mapper.valueToTree(sessions.get(id));
    List<BoxManagedProcessInfo> list = processes.list(id);
    node.set("managed_processes", mapper.valueToTree(list));
    list.stream()
        .filter(p -> p.processId().equals(defaultId()))
        .findFirst()
        .ifPresent(p -> node.set("managed_process", mapper.valueToTree(p)));
    return node;
  }

  private void start(Context ctx) throws JsonProcessingException {
    String body = ctx.body();
    JsonNode node = body.isBlank() ? mapper.createObjectNode() : mapper.readTree(body);
    if (!(node instanceof ObjectNode)) {
      throw new BoxValidationException("request body must be a JSON object");
    }
    BoxManagedProcessSpec spec = mapper.treeToValue(node, BoxManagedProcessSpec.class);
    api.json(ctx, 201, processes.start(id(ctx), spec));
  }

  private void stop(Context ctx) throws JsonProcessingException {
    processes.stop(id(ctx), pid(ctx));
    api.json(ctx, 200, Map.of("stopped", pid(ctx)));
  }

  /**
   * Checks before the upgrade, so that every refusal is an HTTP error with the JSON error body, not
   * a socket that opens and closes. The control token comes first: without it nothing is said about
   * the session or the process.
   */
  private void beforeUpgrade(Context ctx, String processId) throws IOException {
    boolean fromLangBot = LangBotRelayCheck.applies(ctx, api.langbot());
    if (fromLangBot && !LangBotRelayCheck.allows(ctx, api.langbot())) {
      ErrorMapper.refuseLangBotUnauthorized(ctx);
    }
    try {
      if (!fromLangBot) {
        api.authenticate(ctx);
      }
      mode(ctx.queryParam("mode"));
      Long from = from(ctx.queryParam("from"));
      ManagedProcess process = processes.attachable(id(ctx), processId, from);
      long end = process.stdout().end();
      if (from != null && from > end) {
        throw new BoxValidationException(
            "from " + from + " is beyond the end of stdout (" + end + " bytes so far)");
      }
    } catch (RuntimeException e) {
      if (fromLangBot) {
        ErrorMapper.refuseLangBotUpgrade(ctx, e);
      } else {
        ErrorMapper.refuseUpgrade(ctx, e);
      }
    }
  }

  private void relay(WsConfig ws, Function<WsContext, String> processId) {
    ws.onConnect(
        ctx -> {
          ctx.enableAutomaticPings(30, TimeUnit.SECONDS);
          ManagedProcess process;
          try {
            process =
                processes.attachable(
                    ctx.pathParam("id"), processId.apply(ctx), from(ctx.queryParam("from")));
          } catch (RuntimeException e) {
            ErrorMapper.closeRelay(ctx.session, e);
            return;
          }
          Relay.Client client =
              new Relay.Client(
                  ctx.session, mode(ctx.queryParam("mode")), from(ctx.queryParam("from")));
          Relay relay = new Relay(process, processes, client, meter);
          relays.put(ctx.sessionId(), relay);
          relay.start();
        });
    ws.onMessage(
        ctx -> {
          Relay relay = relays.get(ctx.sessionId());
          if (relay != null) {
            relay.onText(ctx.message());
          }
        });
    ws.onBinaryMessage(
        ctx -> {
          Relay relay = relays.get(ctx.sessionId());
          if (relay != null) {
            ByteBuffer data = ctx.data().duplicate();
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            relay.onBinary(bytes);
          }
        });
    ws.onClose(ctx -> detach(ctx.sessionId()));
    ws.onError(ctx -> detach(ctx.sessionId()));
  }

  private void detach(String socketId) {
    Relay relay = relays.remove(socketId);
    if (relay != null) {
      relay.stop();
    }
  }

  private static Relay.Mode mode(@Nullable String value) {
    if (value == null || value.equals("line")) {
      return Relay.Mode.LINE;
    }
    if (value.equals("raw")) {
      return Relay.Mode.RAW;
    }
    throw new BoxValidationException("mode must be line or raw, not '" + value + "'");
  }

  private static @Nullable Long from(@Nullable String value) {
    if (value == null) {
      return null;
    }
    try {
      long offset = Long.parseLong(value.strip());
      if (offset >= 0) {
        return offset;
      }
    } catch (NumberFormatException e) {
      // Falls through to the message.
    }
    throw new BoxValidationException(
        "from must be a byte offset (a non-negative integer), not '"
            + value.toLowerCase(Locale.ROOT)
            + "'");
  }

  private static String id(Context ctx) {
    return ctx.pathParam("id");
  }

  private static String pid(Context ctx) {
    return ctx.pathParam("pid");
  }

  private static String defaultId() {
    return BoxManagedProcessSpec.DEFAULT_PROCESS_ID;
  }
}
