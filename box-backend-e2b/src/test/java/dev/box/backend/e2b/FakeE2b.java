package dev.box.backend.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.box.api.internal.FileTrees;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;

/**
 * A fake E2B service on loopback: the control-plane routes Box uses ({@code POST /sandboxes},
 * {@code GET /sandboxes?metadata=}, {@code GET} and {@code DELETE /sandboxes/{id}}, {@code POST
 * /sandboxes/{id}/timeout}, with the {@code X-API-Key} header) and, under {@code /envd/{id}}, each
 * sandbox's envd: {@code /files} and the Connect-RPC process service ({@link FakeEnvd}).
 *
 * <p>It is a fake because no E2B service is reachable from the machines these tests run on. It
 * follows E2B's published openapi.yml, envd.yaml and process.proto, and runs the commands it is
 * asked to as real local processes in a private directory per sandbox ({@link FakeVm}). What it
 * does not model: real VMs (the fake's processes share the host's kernel, process table and
 * cgroups), templates (any name in {@link #TEMPLATES} is the host's system), memory and CPU sizes,
 * pausing, the {@code network} egress rules (only {@code allow_internet_access}), HTTPS, and envd's
 * binary protobuf codec (Box speaks JSON). Sandboxes expire at their timeout when the next control
 * call comes, not on a timer.
 */
public final class FakeE2b implements AutoCloseable {
  /** The templates the fake knows. */
  public static final Set<String> TEMPLATES = Set.of("base", "box-testkit");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();

  private final HttpServer server;
  private final String apiKey;
  private final Path disks;
  private final Map<String, FakeVm> vms = new ConcurrentHashMap<>();
  private final FakeEnvd envd = new FakeEnvd();

  private FakeE2b(String apiKey, Path disks) throws IOException {
    this.apiKey = apiKey;
    this.disks = disks;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/sandboxes", this::controlPlane);
    server.createContext("/envd/", this::envd);
    server.start();
  }

  /** Starts the fake on a free loopback port; it accepts {@code apiKey} only. */
  public static FakeE2b start(String apiKey) throws IOException {
    return new FakeE2b(apiKey, Files.createTempDirectory("fake-e2b-"));
  }

  /** The control plane's URL. */
  public String apiUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** The envd URL template for Box's {@code e2b_envd_url} setting. */
  public String envdUrl() {
    return apiUrl() + "/envd/{sandboxID}";
  }

  /** The ids of the running sandboxes whose metadata holds {@code key=value}. */
  public List<String> sandboxes(String key, String value) {
    return vms.values().stream()
        .filter(vm -> value.equals(vm.metadata.get(key)))
        .map(vm -> vm.id)
        .sorted()
        .toList();
  }

  /** Kills a sandbox behind its client's back, as the service would at its timeout. */
  public void kill(String sandboxId) {
    FakeVm vm = vms.remove(sandboxId);
    if (vm != null) {
      vm.kill();
    }
  }

  private void controlPlane(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!apiKey.equals(exchange.getRequestHeaders().getFirst("X-API-Key"))) {
        answer(exchange, 401, error(401, "Invalid API key"));
        return;
      }
      expire();
      String path = exchange.getRequestURI().getPath();
      String method = exchange.getRequestMethod();
      List<String> parts = List.of(path.substring(1).split("/"));
      if (parts.size() == 1 && method.equals("POST")) {
        create(exchange);
      } else if (parts.size() == 1 && method.equals("GET")) {
        list(exchange);
      } else if (parts.size() == 2 && method.equals("GET")) {
        FakeVm vm = vms.get(parts.get(1));
        answer(exchange, vm == null ? 404 : 200, vm == null ? error(404, "not found") : listed(vm));
      } else if (parts.size() == 2 && method.equals("DELETE")) {
        FakeVm vm = vms.remove(parts.get(1));
        if (vm != null) {
          vm.kill();
        }
        answer(exchange, vm == null ? 404 : 204, null);
      } else if (parts.size() == 3 && parts.get(2).equals("timeout") && method.equals("POST")) {
        FakeVm vm = vms.get(parts.get(1));
        if (vm != null) {
          vm.expiresAtNanos =
              System.nanoTime() + readJson(exchange).path("timeout").asLong() * 1_000_000_000L;
        }
        answer(exchange, vm == null ? 404 : 204, null);
      } else {
        answer(exchange, 404, error(404, "no route " + method + " " + path));
      }
    }
  }

  private void create(HttpExchange exchange) throws IOException {
    JsonNode body = readJson(exchange);
    String template = body.path("templateID").asText("");
    if (!TEMPLATES.contains(template)) {
      answer(exchange, 400, error(400, "template '" + template + "' not found"));
      return;
    }
    Map<String, String> metadata = new LinkedHashMap<>();
    body.path("metadata")
        .properties()
        .forEach(e -> metadata.put(e.getKey(), e.getValue().asText()));
    String id = "i" + hex(10);
    FakeVm vm =
        new FakeVm(
            id,
            hex(16),
            template,
            metadata,
            body.path("allow_internet_access").asBoolean(true),
            Files.createDirectory(disks.resolve(id)));
    vm.expiresAtNanos = System.nanoTime() + body.path("timeout").asLong(15) * 1_000_000_000L;
    vms.put(id, vm);
    Map<String, Object> created = new LinkedHashMap<>();
    created.put("templateID", template);
    created.put("sandboxID", id);
    created.put("clientID", "fake");
    created.put("envdVersion", "0.2.0");
    created.put("envdAccessToken", vm.accessToken);
    created.put("domain", null);
    answer(exchange, 201, created);
  }

  private void list(HttpExchange exchange) throws IOException {
    Map<String, String> filter = new LinkedHashMap<>();
    String query = exchange.getRequestURI().getRawQuery();
    if (query != null) {
      for (String param : query.split("&")) {
        if (param.startsWith("metadata=")) {
          for (String pair : decode(param.substring("metadata=".length())).split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
              filter.put(decode(pair.substring(0, eq)), decode(pair.substring(eq + 1)));
            }
          }
        }
      }
    }
    List<Object> listed = new ArrayList<>();
    for (FakeVm vm : vms.values()) {
      if (filter.entrySet().stream()
          .allMatch(e -> e.getValue().equals(vm.metadata.get(e.getKey())))) {
        listed.add(listed(vm));
      }
    }
    answer(exchange, 200, listed);
  }

  private static Map<String, Object> listed(FakeVm vm) {
    Map<String, Object> listed = new LinkedHashMap<>();
    listed.put("templateID", vm.template);
    listed.put("sandboxID", vm.id);
    listed.put("clientID", "fake");
    listed.put("metadata", vm.metadata);
    listed.put("state", "running");
    return listed;
  }

  private void expire() {
    long now = System.nanoTime();
    for (FakeVm vm : List.copyOf(vms.values())) {
      if (now - vm.expiresAtNanos > 0) {
        kill(vm.id);
      }
    }
  }

  private void envd(HttpExchange exchange) throws IOException {
    try (exchange) {
      String rest = exchange.getRequestURI().getPath().substring("/envd/".length());
      int slash = rest.indexOf('/');
      FakeVm vm = slash < 0 ? null : vms.get(rest.substring(0, slash));
      if (vm == null) {
        answer(exchange, 502, error(502, "sandbox not found"));
        return;
      }
      if (!vm.accessToken.equals(exchange.getRequestHeaders().getFirst("X-Access-Token"))) {
        answer(exchange, 401, error(401, "invalid access token"));
        return;
      }
      envd.handle(vm, rest.substring(slash), exchange);
    }
  }

  static JsonNode readJson(HttpExchange exchange) throws IOException {
    try (InputStream in = exchange.getRequestBody()) {
      byte[] bytes = in.readNBytes(1 << 20);
      return bytes.length == 0 ? JSON.createObjectNode() : JSON.readTree(bytes);
    }
  }

  static void answer(HttpExchange exchange, int status, @Nullable Object body) throws IOException {
    if (body == null) {
      exchange.sendResponseHeaders(status, -1);
      return;
    }
    byte[] bytes = JSON.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  static Map<String, Object> error(int code, String message) {
    return Map.of("code", code, "message", message);
  }

  static String decode(String text) {
    return URLDecoder.decode(text, StandardCharsets.UTF_8);
  }

  private static String hex(int bytes) {
    byte[] random = new byte[bytes];
    RANDOM.nextBytes(random);
    return HexFormat.of().formatHex(random);
  }

  @Override
  public void close() throws IOException {
    server.stop(0);
    for (String id : List.copyOf(vms.keySet())) {
      kill(id);
    }
    FileTrees.deleteTreeQuietly(disks);
  }
}
