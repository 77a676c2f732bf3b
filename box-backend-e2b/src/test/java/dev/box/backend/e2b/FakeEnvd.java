package dev.box.backend.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * envd as the fake serves it for one {@link FakeVm}: {@code GET} and {@code POST /files}
 * (envd.yaml; raw {@code application/octet-stream} uploads), and the process service of
 * process.proto in Connect's protocol with the JSON codec: {@code Start} answers a stream of
 * enveloped {@code StartResponse} messages (start, data, end) closed by an end-of-stream message;
 * {@code SendSignal}, {@code SendInput} and {@code CloseStdin} are unary. The user comes from HTTP
 * Basic authentication, as envd reads it. A process whose output is still held by a background
 * child after it exits gets its end event once what was already written has been read.
 */
final class FakeEnvd {
  private static final ObjectMapper JSON = new ObjectMapper();

  void handle(FakeVm vm, String path, HttpExchange exchange) throws IOException {
    switch (path) {
      case "/files" -> files(vm, exchange);
      case "/process.Process/Start" -> start(vm, exchange);
      case "/process.Process/SendSignal" -> unary(vm, exchange, this::signal);
      case "/process.Process/SendInput" -> unary(vm, exchange, this::input);
      case "/process.Process/CloseStdin" -> unary(vm, exchange, this::closeStdin);
      default -> FakeE2b.answer(exchange, 404, connectError("unimplemented", path));
    }
  }

  private static String user(HttpExchange exchange) {
    String auth = exchange.getRequestHeaders().getFirst("Authorization");
    if (auth == null || !auth.startsWith("Basic ")) {
      return "user";
    }
    String decoded =
        new String(Base64.getDecoder().decode(auth.substring(6)), StandardCharsets.UTF_8);
    int colon = decoded.indexOf(':');
    return colon < 0 ? decoded : decoded.substring(0, colon);
  }

  // --- /files -----------------------------------------------------------------------------------

  private void files(FakeVm vm, HttpExchange exchange) throws IOException {
    Map<String, String> query = new LinkedHashMap<>();
    String raw = exchange.getRequestURI().getRawQuery();
    for (String param : raw == null ? new String[0] : raw.split("&")) {
      int eq = param.indexOf('=');
      if (eq > 0) {
        query.put(param.substring(0, eq), FakeE2b.decode(param.substring(eq + 1)));
      }
    }
    String user = query.getOrDefault("username", user(exchange));
    Optional<Path> file = vm.file(query.getOrDefault("path", ""));
    if (file.isEmpty() || !insideAfterLinks(vm, file.get())) {
      FakeE2b.answer(exchange, 400, FakeE2b.error(400, "invalid path"));
      return;
    }
    Path target = file.get();
    if (exchange.getRequestMethod().equals("GET")) {
      if (!Files.isRegularFile(target)) {
        FakeE2b.answer(exchange, 404, FakeE2b.error(404, "file not found"));
        return;
      }
      exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
      exchange.sendResponseHeaders(200, Files.size(target));
      try (OutputStream out = exchange.getResponseBody()) {
        Files.copy(target, out);
      }
      return;
    }
    List<Path> created = new ArrayList<>();
    for (Path dir = target.getParent(); dir != null && !Files.exists(dir); dir = dir.getParent()) {
      created.add(0, dir);
    }
    for (Path dir : created) {
      Files.createDirectory(dir);
      own(dir, user);
    }
    try (InputStream in = exchange.getRequestBody()) {
      Files.copy(in, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    own(target, user);
    Map<String, Object> entry =
        Map.of("path", query.get("path"), "name", target.getFileName().toString(), "type", "file");
    FakeE2b.answer(exchange, 200, List.of(entry));
  }

  /** Whether {@code file}, its links followed as far as they exist, stays on the VM's disk. */
  private static boolean insideAfterLinks(FakeVm vm, Path file) throws IOException {
    Path existing = file;
    while (!Files.exists(existing)) {
      existing = Objects.requireNonNull(existing.getParent(), "the root exists");
    }
    return existing.toRealPath().startsWith(vm.root.toRealPath()) && !Files.isSymbolicLink(file);
  }

  private static void own(Path path, String user) throws IOException {
    int uid = user.equals("root") ? 0 : FakeVm.USER_UID;
    Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
    Files.setAttribute(path, "unix:gid", uid, LinkOption.NOFOLLOW_LINKS);
  }

  // --- process.Process --------------------------------------------------------------------------

  private void start(FakeVm vm, HttpExchange exchange) throws IOException {
    if (!"application/connect+json".equals(exchange.getRequestHeaders().getFirst("Content-Type"))) {
      FakeE2b.answer(
          exchange, 415, connectError("invalid_argument", "expected application/connect+json"));
      return;
    }
    byte[] envelope;
    try (InputStream in = exchange.getRequestBody()) {
      envelope = in.readNBytes(1 << 20);
    }
    ByteBuffer header = ByteBuffer.wrap(envelope);
    if (envelope.length < 5 || header.get(0) != 0 || header.getInt(1) != envelope.length - 5) {
      FakeE2b.answer(exchange, 400, connectError("invalid_argument", "malformed envelope"));
      return;
    }
    JsonNode request =
        JSON.readTree(new String(envelope, 5, envelope.length - 5, StandardCharsets.UTF_8));
    JsonNode config = request.path("process");
    List<String> args = new ArrayList<>();
    config.path("args").forEach(a -> args.add(a.asText()));
    Map<String, String> envs = new LinkedHashMap<>();
    config.path("envs").properties().forEach(e -> envs.put(e.getKey(), e.getValue().asText()));
    exchange.getResponseHeaders().set("Content-Type", "application/connect+json");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    Process process;
    try {
      process =
          vm.start(
              user(exchange),
              config.path("cmd").asText(),
              args,
              envs,
              config.path("cwd").asText("/home/user"));
    } catch (IOException e) {
      send(out, 2, Map.of("error", connectError("internal", "cannot start: " + e.getMessage())));
      out.close();
      return;
    }
    int pid = (int) process.pid();
    java.util.concurrent.atomic.AtomicBoolean ended =
        new java.util.concurrent.atomic.AtomicBoolean();
    if (!request.path("stdin").asBoolean(true)) {
      process.getOutputStream().close();
    }
    try {
      send(out, 0, Map.of("event", Map.of("start", Map.of("pid", pid))));
      Thread stdout = pump(process.getInputStream(), "stdout", out, ended);
      Thread stderr = pump(process.getErrorStream(), "stderr", out, ended);
      int code = process.waitFor();
      // A background child may hold the pipes: what was written before the exit is sent.
      stdout.join(200);
      stderr.join(200);
      Map<String, Object> end = new LinkedHashMap<>();
      end.put("exitCode", code > 128 ? -1 : code);
      end.put("exited", code <= 128);
      end.put("status", code > 128 ? "signal: " + signalName(code - 128) : "exit status " + code);
      synchronized (out) {
        ended.set(true);
        send(out, 0, Map.of("event", Map.of("end", end)));
        send(out, 2, Map.of());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      // The client went away; the process goes on, as in envd.
    } finally {
      vm.forget(pid);
      try {
        out.close();
      } catch (IOException e) {
        // Already gone.
      }
    }
  }

  /** bwrap reports a child killed by signal N as exit 128+N; envd says "signal: killed". */
  private static String signalName(int signal) {
    return switch (signal) {
      case 9 -> "killed";
      case 15 -> "terminated";
      default -> "signal " + signal;
    };
  }

  private static Thread pump(
      InputStream in,
      String name,
      OutputStream out,
      java.util.concurrent.atomic.AtomicBoolean ended) {
    return Thread.ofVirtual()
        .start(
            () -> {
              byte[] buffer = new byte[32 * 1024];
              try (in) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                  String data =
                      Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer, n));
                  synchronized (out) {
                    if (ended.get()) {
                      return;
                    }
                    send(out, 0, Map.of("event", Map.of("data", Map.of(name, data))));
                  }
                }
              } catch (IOException e) {
                // The process or the client is gone.
              }
            });
  }

  private static void send(OutputStream out, int flags, Object message) throws IOException {
    byte[] payload = JSON.writeValueAsBytes(message);
    out.write(
        ByteBuffer.allocate(5 + payload.length)
            .put((byte) flags)
            .putInt(payload.length)
            .put(payload)
            .array());
    out.flush();
  }

  private interface Unary {
    boolean apply(FakeVm vm, JsonNode request) throws IOException;
  }

  private void unary(FakeVm vm, HttpExchange exchange, Unary method) throws IOException {
    if (!"application/json".equals(exchange.getRequestHeaders().getFirst("Content-Type"))) {
      FakeE2b.answer(exchange, 415, connectError("invalid_argument", "expected application/json"));
      return;
    }
    if (method.apply(vm, FakeE2b.readJson(exchange))) {
      FakeE2b.answer(exchange, 200, Map.of());
    } else {
      FakeE2b.answer(exchange, 404, connectError("not_found", "process not found"));
    }
  }

  private boolean signal(FakeVm vm, JsonNode request) {
    Optional<Process> process = vm.process(request.path("process").path("pid").asInt());
    process.ifPresent(
        p -> {
          boolean kill = request.path("signal").asText().equals("SIGNAL_SIGKILL");
          p.descendants()
              .forEach(
                  d -> {
                    if (kill) d.destroyForcibly();
                    else d.destroy();
                  });
          if (kill) {
            p.destroyForcibly();
          } else {
            p.destroy();
          }
        });
    return process.isPresent();
  }

  private boolean input(FakeVm vm, JsonNode request) throws IOException {
    Optional<Process> process = vm.process(request.path("process").path("pid").asInt());
    if (process.isPresent()) {
      OutputStream stdin = process.get().getOutputStream();
      stdin.write(Base64.getDecoder().decode(request.path("input").path("stdin").asText("")));
      stdin.flush();
    }
    return process.isPresent();
  }

  private boolean closeStdin(FakeVm vm, JsonNode request) throws IOException {
    Optional<Process> process = vm.process(request.path("process").path("pid").asInt());
    if (process.isPresent()) {
      process.get().getOutputStream().close();
    }
    return process.isPresent();
  }

  private static Map<String, Object> connectError(String code, String message) {
    return Map.of("code", code, "message", message);
  }
}
