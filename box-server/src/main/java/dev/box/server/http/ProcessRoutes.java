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
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The managed-process routes and the stdio relay WebSocket.
 *
 * <p>A process is held by the replica that started it. Where the backend shares its sessions among
 * replicas, a request for a process this replica does not hold is answered by the replica that
 * holds it ({@link PeerProcesses}: its HTTP routes proxied, its relay WebSocket proxied frame by
 * frame by {@link RelayProxy}), and a session's list of processes is merged from every live
 * replica's. A request another replica forwarded ({@link Peers#FORWARDED}) is served from this
 * replica's own processes alone.
 */
final class ProcessRoutes {
  private static final String BASE = "/v1/sessions/{id}/managed-process";
  private static final String MANAGED_PROCESS = "managed-process";

  private final HttpApi api;
  private final SessionManager sessions;
  private final ProcessManager processes;
  private final ObjectMapper mapper;
  private final RelayMeter meter;
  private final Peers peers;
  private final PeerProcesses others;
  private final ConcurrentHashMap<String, RelayEnd> relays = new ConcurrentHashMap<>();
  private final ProxiedUpgrades proxied = new ProxiedUpgrades();

  /**
   * The routes of {@code api}, over its sessions, its mapper and its LangBot control plane, and the
   * other replicas of its tenant.
   */
  ProcessRoutes(HttpApi api, RelayMeter meter, Peers peers) {
    this.api = api;
    this.sessions = api.sessions();
    this.processes = sessions.processes();
    this.mapper = api.mapper();
    this.meter = meter;
    this.peers = peers;
    this.others = new PeerProcesses(peers, mapper);
  }

  void register(JavalinConfig config) {
    config.routes.post(BASE, this::start);
    config.routes.get(BASE, ctx -> one(ctx, defaultId()));
    config.routes.get(BASE + "/{pid}", ctx -> one(ctx, pid(ctx)));
    config.routes.delete(BASE + "/{pid}", this::stop);
    config.routes.wsBeforeUpgrade(BASE + "/{pid}/ws", ctx -> beforeUpgrade(ctx, pid(ctx)));
    config.routes.wsBeforeUpgrade(BASE + "/ws", ctx -> beforeUpgrade(ctx, defaultId()));
    config.routes.ws(BASE + "/{pid}/ws", ws -> relay(ws, c -> c.pathParam("pid")));
    config.routes.ws(BASE + "/ws", ws -> relay(ws, c -> defaultId()));
  }

  /**
   * The session as {@code GET /v1/sessions/{id}} shows it: with its managed processes, those the
   * other live replicas hold included, oldest first. Forwarded, only the processes this replica
   * holds ({@code managed_processes}), without adopting the session.
   */
  JsonNode sessionWithProcesses(Context ctx) {
    String id = id(ctx);
    if (Peers.forwarded(ctx)) {
      ObjectNode node = mapper.createObjectNode();
      node.set("managed_processes", mapper.valueToTree(processes.listHeld(id)));
      return node;
    }
    ObjectNode node = mapper.valueToTree(sessions.get(id));
    List<BoxManagedProcessInfo> list = new ArrayList<>(processes.list(id));
    list.addAll(others.list(id));
    list.sort(Comparator.comparing(BoxManagedProcessInfo::startedAt));
    node.set("managed_processes", mapper.valueToTree(list));
    list.stream()
        .filter(p -> p.processId().equals(defaultId()))
        .findFirst()
        .ifPresent(p -> node.set("managed_process", mapper.valueToTree(p)));
    return node;
  }

  /**
   * The process {@code processId}: this replica's, else the replica's that holds it. Forwarded,
   * this replica's alone.
   */
  private void one(Context ctx, String processId) throws JsonProcessingException {
    String id = id(ctx);
    URI owner = holder(ctx, id, processId);
    if (owner != null) {
      others.proxy(ctx, owner, "GET", Peers.sessionPath(id, MANAGED_PROCESS, processId));
      return;
    }
    api.json(ctx, 200, processes.get(id, processId));
  }

  private void start(Context ctx) throws JsonProcessingException {
    String body = ctx.body();
    JsonNode node = body.isBlank() ? mapper.createObjectNode() : mapper.readTree(body);
    if (!(node instanceof ObjectNode)) {
      throw new BoxValidationException("request body must be a JSON object");
    }
    BoxManagedProcessSpec spec = mapper.treeToValue(node, BoxManagedProcessSpec.class);
    if (!Peers.forwarded(ctx)) {
      others.stopElsewhere(id(ctx), spec.processId());
    }
    api.json(ctx, 201, processes.start(id(ctx), spec));
  }

  /**
   * The replica to send a request for process {@code processId} to, when another one holds it; null
   * to serve it here. A forwarded request is served here, and only for a process held here.
   *
   * @throws dev.box.api.BoxManagedProcessNotFoundException when a forwarded request names a process
   *     this replica does not hold
   */
  private @Nullable URI holder(Context ctx, String id, String processId) {
    if (Peers.forwarded(ctx)) {
      processes.requireHeld(id, processId);
      return null;
    }
    return processes.held(id, processId) == null ? others.owner(id, processId, true) : null;
  }

  private void stop(Context ctx) throws JsonProcessingException {
    String id = id(ctx);
    String processId = pid(ctx);
    URI owner = holder(ctx, id, processId);
    if (owner != null) {
      others.proxy(ctx, owner, "DELETE", Peers.sessionPath(id, MANAGED_PROCESS, processId));
      return;
    }
    processes.stop(id, processId);
    api.json(ctx, 200, Map.of("stopped", processId));
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
    RelayProxy.Refused refused = null;
    try {
      if (!fromLangBot) {
        api.authenticate(ctx);
      }
      Relay.Mode mode = mode(ctx.queryParam("mode"));
      Long from = from(ctx.queryParam("from"));
      String id = id(ctx);
      URI owner = holder(ctx, id, processId);
      if (owner != null) {
        proxyUpgrade(ctx, owner, processId, mode, from);
        return;
      }
      ManagedProcess process = processes.attachable(id, processId, from);
      long end = process.stdout().end();
      if (from != null && from > end) {
        throw new BoxValidationException(
            "from " + from + " is beyond the end of stdout (" + end + " bytes so far)");
      }
    } catch (RelayProxy.Refused e) {
      refused = e;
    } catch (RuntimeException e) {
      if (fromLangBot) {
        ErrorMapper.refuseLangBotUpgrade(ctx, e);
      } else {
        ErrorMapper.refuseUpgrade(ctx, e);
      }
    }
    if (refused != null) {
      Upgrades.refuse(
          ctx,
          refused.status(),
          "application/json",
          refused.body().getBytes(StandardCharsets.UTF_8),
          "refused by the replica that holds the process");
    }
  }

  /**
   * Opens the relay of process {@code processId} on {@code owner} for this upgrade, with the
   * checked {@code mode} and {@code from}, for the client's socket to claim ({@link
   * ProxiedUpgrades}).
   *
   * @throws RelayProxy.Refused when the owner refuses it
   */
  private void proxyUpgrade(
      Context ctx, URI owner, String processId, Relay.Mode mode, @Nullable Long from) {
    String query =
        "mode=" + (mode == Relay.Mode.RAW ? "raw" : "line") + (from == null ? "" : "&from=" + from);
    String path = Peers.sessionPath(id(ctx), MANAGED_PROCESS, processId, "ws");
    proxied.hold(ctx, RelayProxy.open(peers, Peers.webSocketUri(owner, path, query)));
  }

  private void relay(WsConfig ws, Function<WsContext, String> processId) {
    ws.onConnect(
        ctx -> {
          ctx.enableAutomaticPings(30, TimeUnit.SECONDS);
          if (ProxiedUpgrades.proxied(ctx)) {
            RelayProxy proxy = proxied.claim(ctx);
            if (proxy != null) {
              relays.put(ctx.sessionId(), proxy);
            }
            return;
          }
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
          RelayEnd relay = relays.get(ctx.sessionId());
          if (relay != null) {
            relay.onText(ctx.message());
          }
        });
    ws.onBinaryMessage(
        ctx -> {
          RelayEnd relay = relays.get(ctx.sessionId());
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
    RelayEnd relay = relays.remove(socketId);
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
