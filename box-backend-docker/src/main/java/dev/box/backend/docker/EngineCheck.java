package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxCapabilities;
import dev.box.core.backend.BackendStatus;
import dev.box.core.net.NetnsFirewall;
import dev.box.sandbox.engine.EngineClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Asks the engine once whether it serves: what is enforced and how, or why sessions cannot start.
 * {@link EngineProbe} keeps the answer and asks again.
 *
 * @param engine {@code docker} or {@code podman}
 * @param socket the engine's API socket
 * @param client the engine's API
 * @param firewall the egress firewall, whose status is reported
 * @param engineProfile the seccomp profile the engine applies; one with an error is unavailable
 * @param seccomp the {@code seccomp} entry of the status
 * @param cpuLimit whether containers get a CPU quota, read at every probe
 * @param writableRoot what bounds a writable root, read at every probe
 * @param terminals whether containers get the exec agent, and so terminals; read at every probe
 */
record EngineCheck(
    String engine,
    Path socket,
    EngineClient client,
    NetnsFirewall firewall,
    EngineProfile engineProfile,
    String seccomp,
    BooleanSupplier cpuLimit,
    Supplier<String> writableRoot,
    BooleanSupplier terminals) {
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

  /** {@code Docker Engine} or {@code Podman}, as messages name the engine. */
  String title() {
    return title(engine);
  }

  private static String title(String engine) {
    return engine.equals("podman") ? "Podman" : "Docker Engine";
  }

  /**
   * Why {@code engine} cannot serve when {@code socket} is not there (its status's reason), or null
   * when it is.
   */
  static @Nullable String missingSocket(String engine, Path socket) {
    return Files.exists(socket)
        ? null
        : "no " + title(engine) + " API socket at " + socket + hint(engine, socket);
  }

  /** Asks the engine now. */
  BackendStatus probe() {
    Map<String, String> enforced = enforced();
    String where = " at " + socket;
    String profileError = engineProfile.error();
    if (profileError != null) {
      return new BackendStatus(engine, false, profileError, enforced);
    }
    String missing = missingSocket(engine, socket);
    if (missing != null) {
      return new BackendStatus(engine, false, missing, enforced);
    }
    try {
      EngineClient.Response version = client.call("GET", "/version", null, PROBE_TIMEOUT);
      if (!version.ok()) {
        return new BackendStatus(
            engine,
            false,
            title() + " answered " + version.status() + where + ": " + version.message(),
            enforced);
      }
      JsonNode v = version.json();
      String reason =
          title()
              + " "
              + v.path("Version").asText("?")
              + " (API "
              + v.path("ApiVersion").asText("?")
              + ")"
              + where;
      Set<String> capabilities =
          new HashSet<>(
              Set.of(
                  BoxCapabilities.IMAGES,
                  BoxCapabilities.HOST_PATHS,
                  BoxCapabilities.READ_ONLY_ROOTFS,
                  BoxCapabilities.PROCESS_MEMORY_LIMIT,
                  BoxCapabilities.PAUSE));
      if (terminals.getAsBoolean()) {
        capabilities.add(BoxCapabilities.TERMINAL);
      }
      return new BackendStatus(engine, true, reason, enforced, capabilities);
    } catch (IOException e) {
      return new BackendStatus(
          engine,
          false,
          "cannot reach " + title() + where + ": " + e.getMessage() + hint(),
          enforced);
    }
  }

  private Map<String, String> enforced() {
    Map<String, String> enforced = new LinkedHashMap<>();
    String mechanism = engine + "-cgroup";
    enforced.put("memory", mechanism);
    enforced.put("pids", mechanism);
    enforced.put("cpu", cpuLimit.getAsBoolean() ? mechanism : "none");
    enforced.put("timeout", "kill");
    enforced.put("output", "bounded");
    enforced.put(
        "egress",
        firewall.available() ? firewall.status() : firewall.status() + "; network on is refused");
    enforced.put("seccomp", seccomp);
    // The image's root is read-only unless read_only_rootfs is false; then /tmp is part of the
    // writable root, which the engine's storage bounds or not (see WritableRoot).
    enforced.put("tmp", "tmpfs 64 MiB (read-only root); else part of the writable root");
    enforced.put("writable_root", writableRoot.get());
    return enforced;
  }

  private String hint() {
    return hint(engine, socket);
  }

  private static String hint(String engine, Path socket) {
    return engine.equals("podman")
        ? " (start it with: podman system service --time=0 unix://" + socket + ")"
        : " (start dockerd, or set docker_host)";
  }
}
