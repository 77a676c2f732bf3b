package dev.box.backend.boxlite;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.box.api.internal.FileTrees;
import dev.box.fakemachine.FakeMachine;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.websocket.WsConfig;
import io.javalin.websocket.WsContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;

/**
 * A fake BoxLite server ({@code boxlite serve}) on loopback, speaking the routes of BoxLite's
 * published box.openapi.yaml that Box uses, on their single-tenant paths ({@code /v1/boxes/...}):
 * {@code GET /v1/config}, {@code GET /v1/me}, box create (201), list, get, head, start, stop and
 * delete ({@code ?force=true}), exec (201 with the execution id), execution status, signal (SIGKILL
 * refused) and kill (SIGKILL and eviction), and the attach WebSocket: binary frames {@code
 * [channel][payload]} out (0x01 stdout, 0x02 stderr), the text frame {@code
 * {"type":"exit","exit_code":N}} then a normal close (1000); binary frames in as stdin, {@code
 * {"type":"stdin_eof"}}, {@code {"type":"signal","sig":N}} (BoxLite's whitelist; others answered
 * with a non-fatal {@code {"type":"error"}} frame); one client attached at a time (409 for a
 * second), and the execution runs on without one. Every call but {@code /v1/config} needs {@code
 * Authorization: Bearer} with the fake's token (401 otherwise); an unknown box or execution is 404;
 * errors carry the API's {@code {"error": {"message", "type", "code"}}} body.
 *
 * <p>It is a fake because BoxLite needs KVM and libkrun, which the machines these tests run on do
 * not have. Each box is a private directory standing in for the VM's disk, its executions real
 * local processes under bubblewrap ({@link FakeMachine}), with no network namespace of their own
 * unless the box's outbound network is disabled. What it does not model: VMs (the processes share
 * the host's kernel, process table and cgroups), images (none is pulled: every image name runs the
 * host's {@code /usr}), the box's {@code cpus} and {@code memory_mib} (recorded, not applied), the
 * {@code user} a box runs as (the fake's own), volumes, secrets, {@code allow_net}, snapshots,
 * clone, export, import, tunnels, metrics, images, API keys, file transfer ({@code /files}),
 * terminals ({@code tty}, resize), the execution's {@code timeout_seconds}, idempotency keys,
 * pagination (one page), AutoStop and AutoDelete, the keepalive pings, and HTTPS.
 */
public final class FakeBoxlite implements AutoCloseable {
  /** The signals BoxLite lets a client send: HUP, INT, QUIT, ABRT, USR1, USR2, TERM, WINCH. */
  static final Set<Integer> SIGNALS = Set.of(1, 2, 3, 6, 10, 12, 15, 28);

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String CLAIM = "fake.boxlite.execution";
  private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}");
  private static final Pattern IMAGE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}");
  private static final Set<String> CREATE_FIELDS =
      Set.of(
          "advanced",
          "name",
          "image",
          "rootfs_path",
          "cpus",
          "memory_mib",
          "disk_size_gb",
          "working_dir",
          "env",
          "entrypoint",
          "cmd",
          "user",
          "volumes",
          "network",
          "secrets",
          "detach",
          "tty",
          "auto_stop",
          "auto_delete",
          "auto_resume");

  private final String token;
  private final Path disks;
  private final Javalin server;
  private final Map<String, FakeBox> boxes = new ConcurrentHashMap<>();

  private FakeBoxlite(String token, Path disks) {
    this.token = token;
    this.disks = disks;
    this.server =
        Javalin.create(
                config -> {
                  config.startup.showJavalinBanner = false;
                  config.jetty.modifyWebSocketServletFactory(
                      factory -> factory.setMaxBinaryMessageSize(1 << 20));
                  config.routes.before(this::authenticate);
                  config.routes.get("/v1/config", this::serverConfig);
                  config.routes.get("/v1/me", ctx -> json(ctx, 200, principal()));
                  config.routes.post("/v1/boxes", this::create);
                  config.routes.get("/v1/boxes", this::list);
                  config.routes.get("/v1/boxes/{box_id}", ctx -> json(ctx, 200, box(ctx).json()));
                  config.routes.head("/v1/boxes/{box_id}", this::exists);
                  config.routes.delete("/v1/boxes/{box_id}", this::remove);
                  config.routes.post("/v1/boxes/{box_id}/start", this::start);
                  config.routes.post("/v1/boxes/{box_id}/stop", this::stop);
                  config.routes.post("/v1/boxes/{box_id}/exec", this::exec);
                  config.routes.get(
                      "/v1/boxes/{box_id}/executions/{exec_id}",
                      ctx -> json(ctx, 200, info(execution(ctx))));
                  config.routes.delete("/v1/boxes/{box_id}/executions/{exec_id}", this::kill);
                  config.routes.post(
                      "/v1/boxes/{box_id}/executions/{exec_id}/signal", this::signal);
                  config.routes.wsBeforeUpgrade(
                      "/v1/boxes/{box_id}/executions/{exec_id}/attach", this::beforeAttach);
                  config.routes.ws("/v1/boxes/{box_id}/executions/{exec_id}/attach", this::attach);
                  config.routes.exception(Refusal.class, (e, ctx) -> error(ctx, e));
                })
            .start("127.0.0.1", 0);
  }

  /** Starts the fake on a free loopback port; it accepts the bearer {@code token} only. */
  public static FakeBoxlite start(String token) throws IOException {
    return new FakeBoxlite(token, Files.createTempDirectory("fake-boxlite-"));
  }

  /** The server's address, as Box's {@code boxlite_url} names it (without {@code /v1}). */
  public String url() {
    return "http://127.0.0.1:" + server.port();
  }

  /**
   * The boxes Box named for the server whose state directory hashes to {@code dataLabel}, each as
   * {@code <id> <name>}.
   */
  public List<String> boxesOf(String dataLabel) {
    String prefix = BoxNames.prefix(dataLabel);
    return boxes.values().stream()
        .filter(b -> b.name != null && b.name.startsWith(prefix))
        .map(b -> b.id + " " + b.name)
        .sorted()
        .toList();
  }

  /** Removes a box behind its client's back, as an operator or a crash of its VM would. */
  public void kill(String boxId) {
    FakeBox box = boxes.remove(boxId);
    if (box != null) {
      box.vm.kill();
    }
  }

  // --- routes
  // -------------------------------------------------------------------------------------

  private void authenticate(Context ctx) {
    if (!ctx.path().equals("/v1/config")
        && !("Bearer " + token).equals(ctx.header("Authorization"))) {
      throw new Refusal(401, "AuthError", "unauthenticated", "invalid or missing API key");
    }
  }

  private void serverConfig(Context ctx) {
    Map<String, Object> capabilities = new LinkedHashMap<>();
    capabilities.put("max_cpus", 32);
    capabilities.put("tty_enabled", false);
    capabilities.put("streaming_enabled", true);
    capabilities.put("snapshots_enabled", false);
    capabilities.put("clone_enabled", false);
    capabilities.put("export_enabled", false);
    json(
        ctx,
        200,
        Map.of(
            "defaults",
            Map.of("cpus", 2, "memory_mib", 512, "auto_delete", 0),
            "capabilities",
            capabilities));
  }

  private static Map<String, Object> principal() {
    Map<String, Object> principal = new LinkedHashMap<>();
    principal.put("subject", "fake-boxlite");
    principal.put("path_prefix", null);
    principal.put("scopes", List.of());
    return principal;
  }

  private void create(Context ctx) throws IOException {
    JsonNode body = body(ctx);
    body.fieldNames()
        .forEachRemaining(
            field -> {
              if (!CREATE_FIELDS.contains(field)) {
                throw invalid("unknown field '" + field + "'");
              }
            });
    String image = body.path("image").asText("alpine:latest");
    if (!IMAGE.matcher(image).matches()) {
      throw invalid("image must be an OCI image reference");
    }
    int cpus = body.path("cpus").asInt(2);
    int memory = body.path("memory_mib").asInt(512);
    if (cpus < 1 || cpus > 32) {
      throw invalid("cpus must be between 1 and 32");
    }
    if (memory < 128) {
      throw invalid("memory_mib must be at least 128");
    }
    if (!body.path("volumes").isMissingNode() && !body.path("volumes").isEmpty()) {
      throw new Refusal(400, "UnsupportedError", "unsupported", "the fake has no volumes");
    }
    String workingDir = body.path("working_dir").asText("/");
    if (!workingDir.startsWith("/") || workingDir.contains("..")) {
      throw invalid("working_dir must be an absolute path");
    }
    String name = body.path("name").isMissingNode() ? null : body.path("name").asText("");
    if (name != null && !NAME.matcher(name).matches()) {
      throw invalid("name must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$, at most 128 characters");
    }
    String id = "bx" + hex(12);
    boolean network =
        !body.path("network").path("outbound").path("mode").asText("").equals("disabled");
    FakeMachine vm = new FakeMachine(id, network, Files.createDirectory(disks.resolve(id)));
    Files.createDirectories(vm.root.resolve(workingDir.substring(1)));
    FakeBox box =
        new FakeBox(
            id, name, image, cpus, memory, workingDir, strings(body.path("env")), network, vm);
    synchronized (boxes) {
      if (name != null && boxes.values().stream().anyMatch(b -> name.equals(b.name))) {
        vm.kill();
        throw new Refusal(409, "AlreadyExistsError", "already_exists", "box exists: " + name);
      }
      boxes.put(id, box);
    }
    ctx.header("Location", "/v1/boxes/" + id);
    json(ctx, 201, box.json());
  }

  private void list(Context ctx) {
    String status = ctx.queryParam("status");
    List<Object> listed =
        boxes.values().stream()
            .filter(b -> status == null || status.equals(b.status))
            .map(b -> (Object) b.json())
            .toList();
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("boxes", listed);
    answer.put("next_page_token", null);
    json(ctx, 200, answer);
  }

  private void exists(Context ctx) {
    try {
      box(ctx);
      ctx.status(204);
    } catch (Refusal e) {
      ctx.status(404);
    }
  }

  private void remove(Context ctx) {
    FakeBox box = box(ctx);
    if (box.status.equals("running") && !"true".equals(ctx.queryParam("force"))) {
      throw new Refusal(
          409, "InvalidStateError", "invalid_state", "box is running: stop it or use force=true");
    }
    kill(box.id);
    ctx.status(204);
  }

  private void start(Context ctx) {
    FakeBox box = box(ctx);
    box.status("running");
    json(ctx, 200, box.json());
  }

  private void stop(Context ctx) throws InterruptedException {
    FakeBox box = box(ctx);
    for (FakeExecution execution : box.executions.values()) {
      execution.kill();
    }
    box.status("stopped");
    json(ctx, 200, box.json());
  }

  private void exec(Context ctx) throws IOException {
    FakeBox box = box(ctx);
    JsonNode body = body(ctx);
    if (!body.path("command").isTextual() || body.path("command").asText().isEmpty()) {
      throw invalid("command is required");
    }
    if (body.path("tty").asBoolean(false)) {
      throw new Refusal(400, "UnsupportedError", "unsupported", "the fake has no terminals");
    }
    List<String> args = new java.util.ArrayList<>();
    body.path("args").forEach(a -> args.add(a.asText()));
    Map<String, String> env = new LinkedHashMap<>(box.env);
    env.putAll(strings(body.path("env")));
    box.status("running");
    Process process =
        box.vm.start(
            "root",
            body.path("command").asText(),
            args,
            env,
            body.path("working_dir").asText(box.workingDir));
    String id = "exec-" + hex(10);
    box.executions.put(id, new FakeExecution(id, process));
    ctx.header("Location", "/v1/boxes/" + box.id + "/executions/" + id);
    json(ctx, 201, Map.of("execution_id", id));
  }

  private static Map<String, Object> info(FakeExecution execution) {
    Map<String, Object> info = new LinkedHashMap<>();
    info.put("execution_id", execution.id);
    info.put("status", execution.status());
    info.put("exit_code", execution.exitCode());
    info.put("started_at", execution.startedAt.toString());
    return info;
  }

  private void kill(Context ctx) throws InterruptedException {
    FakeBox box = box(ctx);
    FakeExecution execution = execution(ctx);
    execution.kill();
    box.executions.remove(execution.id);
    ctx.status(204);
  }

  private void signal(Context ctx) throws IOException, InterruptedException {
    FakeExecution execution = execution(ctx);
    int signal = body(ctx).path("signal").asInt(0);
    if (!SIGNALS.contains(signal)) {
      throw invalid("signal " + signal + " is not allowed (SIGKILL: DELETE the execution)");
    }
    execution.signal(signal);
    ctx.status(204);
  }

  // --- attach
  // -------------------------------------------------------------------------------------

  private void beforeAttach(Context ctx) throws IOException {
    try {
      authenticate(ctx);
      FakeExecution execution = execution(ctx);
      if (!execution.claim()) {
        throw new Refusal(409, "InvalidStateError", "invalid_state", "another client is attached");
      }
      ctx.attribute(CLAIM, execution);
    } catch (Refusal e) {
      byte[] bytes = JSON.writeValueAsBytes(errorBody(e));
      ctx.res().setStatus(e.status);
      ctx.res().setContentType("application/json");
      ctx.res().setContentLength(bytes.length);
      ctx.res().getOutputStream().write(bytes);
      ctx.res().flushBuffer();
      throw new HttpResponseException(e.status, String.valueOf(e.getMessage()));
    }
  }

  private void attach(WsConfig ws) {
    Map<String, Thread> senders = new ConcurrentHashMap<>();
    ws.onConnect(
        ctx -> {
          FakeExecution execution = claimed(ctx);
          senders.put(
              ctx.sessionId(),
              Thread.ofVirtual()
                  .name("fake-boxlite-attach-" + execution.id)
                  .start(() -> send(ctx.session, execution)));
        });
    ws.onBinaryMessage(
        ctx -> {
          ByteBuffer data = ctx.data();
          byte[] bytes = new byte[data.remaining()];
          data.get(bytes);
          try {
            claimed(ctx).stdin(bytes);
          } catch (IOException e) {
            ctx.send("{\"type\":\"error\",\"message\":\"stdin is closed\"}");
          }
        });
    ws.onMessage(ctx -> control(ctx, claimed(ctx), JSON.readTree(ctx.message())));
    ws.onClose(
        ctx -> {
          Thread sender = senders.remove(ctx.sessionId());
          if (sender != null) {
            sender.interrupt();
          }
          claimed(ctx).unclaim();
        });
  }

  private static FakeExecution claimed(WsContext ctx) {
    FakeExecution execution = ctx.attribute(CLAIM);
    if (execution == null) {
      throw new IllegalStateException("an attach without its execution");
    }
    return execution;
  }

  private static void control(WsContext ctx, FakeExecution execution, JsonNode message)
      throws IOException, InterruptedException {
    switch (message.path("type").asText("")) {
      case "stdin_eof" -> execution.closeStdin();
      case "signal" -> {
        int sig = message.path("sig").asInt(0);
        if (SIGNALS.contains(sig)) {
          execution.signal(sig);
        } else {
          ctx.send("{\"type\":\"error\",\"message\":\"signal " + sig + " is not allowed\"}");
        }
      }
      default -> ctx.send("{\"type\":\"error\",\"message\":\"unknown control message\"}");
    }
  }

  /** Sends the execution's frames until its exit, then closes normally. */
  private static void send(Session session, FakeExecution execution) {
    try {
      while (session.isOpen()) {
        FakeExecution.Frame frame = execution.next(1000);
        if (frame == null) {
          continue;
        }
        Callback.Completable done = new Callback.Completable();
        if (frame.channel() == 0) {
          session.sendText("{\"type\":\"exit\",\"exit_code\":" + frame.exitCode() + "}", done);
          done.get(30, TimeUnit.SECONDS);
          session.close(1000, "exited", Callback.NOOP);
          return;
        }
        session.sendBinary(ByteBuffer.wrap(frame.payload()), done);
        done.get(30, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      session.close(1011, "send failed", Callback.NOOP);
    }
  }

  // --- helpers
  // ------------------------------------------------------------------------------------

  private FakeBox box(Context ctx) {
    String id = ctx.pathParam("box_id");
    FakeBox box =
        boxes.values().stream()
            .filter(b -> b.id.equals(id) || id.equals(b.name))
            .findFirst()
            .orElse(null);
    if (box == null) {
      throw new Refusal(404, "NotFoundError", "not_found", "box not found: " + id);
    }
    return box;
  }

  private FakeExecution execution(Context ctx) {
    String id = ctx.pathParam("exec_id");
    FakeExecution execution = box(ctx).executions.get(id);
    if (execution == null) {
      throw new Refusal(404, "NotFoundError", "not_found", "execution not found: " + id);
    }
    return execution;
  }

  private static JsonNode body(Context ctx) {
    try {
      byte[] bytes = ctx.bodyAsBytes();
      JsonNode body = bytes.length == 0 ? JSON.createObjectNode() : JSON.readTree(bytes);
      if (!body.isObject()) {
        throw invalid("the body must be a JSON object");
      }
      return body;
    } catch (IOException e) {
      throw invalid("the body is not JSON");
    }
  }

  private static Map<String, String> strings(JsonNode object) {
    Map<String, String> map = new LinkedHashMap<>();
    object.properties().forEach(e -> map.put(e.getKey(), e.getValue().asText()));
    return map;
  }

  private static Refusal invalid(String message) {
    return new Refusal(400, "InvalidArgumentError", "invalid_argument", message);
  }

  private static void json(Context ctx, int status, Object body) {
    try {
      ctx.status(status).contentType("application/json").result(JSON.writeValueAsBytes(body));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void error(Context ctx, Refusal e) {
    json(ctx, e.status, errorBody(e));
  }

  private static Map<String, Object> errorBody(Refusal e) {
    return Map.of(
        "error",
        Map.of(
            "message",
            String.valueOf(e.getMessage()),
            "type",
            e.type,
            "code",
            e.code,
            "request_id",
            "req_" + hex(8)));
  }

  private static String hex(int bytes) {
    byte[] random = new byte[bytes];
    RANDOM.nextBytes(random);
    return HexFormat.of().formatHex(random);
  }

  @Override
  public void close() {
    server.stop();
    for (String id : List.copyOf(boxes.keySet())) {
      kill(id);
    }
    FileTrees.deleteTreeQuietly(disks);
  }

  /** An error answer of the API: its status and the {@code type} and {@code code} of its body. */
  private static final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;

    final int status;
    final String type;
    final String code;

    Refusal(int status, String type, String code, String message) {
      super(message);
      this.status = status;
      this.type = type;
      this.code = code;
    }
  }
}
