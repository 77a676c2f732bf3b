package dev.box.backend.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.api.Cidr;
import dev.box.core.Hashes;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.EgressRuleset;
import dev.box.core.net.NetnsFirewall;
import dev.box.core.session.SandboxNames;
import dev.box.guard.SyscallGuard;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Docker and Podman backends: a session is one long-lived, hardened container, and commands are
 * exec'd into it through the Engine API on the engine's Unix socket (Podman serves the same API
 * with {@code podman system service}).
 *
 * <p>Containers run as an unprivileged user with every capability dropped, no-new-privileges, an
 * init that reaps zombies as PID 1, the session's memory (swap included), process and CPU limits,
 * no network when the session asks none, and a read-only root with a bounded /tmp when asked. Every
 * process in them, PID 1 included, runs under Box's seccomp filter ({@link SyscallGuard}, mounted
 * read-only at {@value SyscallGuard#SANDBOX_PATH}), itself under the engine's profile: its default,
 * or the operator's {@code seccomp_profile}. They are named and labelled as LangBot's runtime does
 * ({@code langbot.box=true}, {@code langbot.session_id}, {@code langbot.box.instance_id}) plus
 * {@code dev.box.data}, the hash of the server's data directory, so that orphan cleanup never
 * touches another server's containers.
 */
public final class ContainerBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(ContainerBackend.class);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration REPROBE_INTERVAL = Duration.ofSeconds(5);

  /** The unprivileged user sandboxes run as, as in the bubblewrap backend. */
  static final String SANDBOX_USER = "1000:1000";

  private static final int SANDBOX_UID = 1000;

  /**
   * Keeps the container running. PID 1 is box-guard's init when the guard is available (then it is
   * filtered too: the engine's init is not, and a process of the same user could rewrite it through
   * /proc/1/mem), else the engine's init; either reaps orphans.
   */
  private static final List<String> HOLDER = List.of("/bin/sh", "-c", "exec sleep infinity");

  private static final Map<String, String> BASE_ENV =
      Map.of(
          "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "HOME", "/tmp",
          "LANG", "C.UTF-8",
          "PYTHONUNBUFFERED", "1");

  /**
   * The settings of a container backend.
   *
   * @param engine {@code docker} or {@code podman}
   * @param socket the engine's API socket
   * @param defaultImage the image for specs that name none (that name the reference default), or
   *     null to use the spec's
   * @param cpuLimit whether containers get a CPU quota
   * @param pullTimeout how long pulling a missing image may take
   * @param seccompProfile the operator's seccomp profile (JSON) that the engine applies instead of
   *     its default, or null for the engine's default; Box's own filter applies under either
   */
  public record Settings(
      String engine,
      Path socket,
      @Nullable String defaultImage,
      boolean cpuLimit,
      Duration pullTimeout,
      @Nullable Path seccompProfile) {

    /** Settings with the engine's default seccomp profile. */
    public Settings(
        String engine,
        Path socket,
        @Nullable String defaultImage,
        boolean cpuLimit,
        Duration pullTimeout) {
      this(engine, socket, defaultImage, cpuLimit, pullTimeout, null);
    }
  }

  private final Settings settings;
  private final EngineClient client;
  private final EgressPolicy egress;
  private final NetnsFirewall firewall;
  private final Path workspaces;
  private final String instanceId;
  private final String dataLabel;
  private final SyscallGuard guard;
  private final EngineProfile engineProfile;
  private volatile boolean cpuLimit;
  private volatile BackendStatus status;
  private volatile long probedAt;

  /**
   * Installs box-guard in the data directory, reads the operator's seccomp profile if any, connects
   * to the engine and probes it.
   *
   * @param settings which engine and how to use it
   * @param dataDir the server's data directory (its hash labels the containers)
   * @param instanceId the id of this server instance
   */
  public ContainerBackend(Settings settings, Path dataDir, String instanceId) {
    this(settings, dataDir, instanceId, EgressPolicy.DEFAULT);
  }

  /**
   * Installs box-guard in the data directory, reads the operator's seccomp profile if any, connects
   * to the engine and probes it.
   *
   * @param settings which engine and how to use it
   * @param dataDir the server's data directory (its hash labels the containers)
   * @param instanceId the id of this server instance
   * @param egress the operator's egress policy for network-on containers
   */
  public ContainerBackend(Settings settings, Path dataDir, String instanceId, EgressPolicy egress) {
    this(settings, dataDir, instanceId, egress, SyscallGuard.install(dataDir));
  }

  /** As the public constructors, with the guard given (tests use an unavailable one). */
  ContainerBackend(
      Settings settings, Path dataDir, String instanceId, EgressPolicy egress, SyscallGuard guard) {
    this.settings = settings;
    this.egress = egress;
    this.firewall = NetnsFirewall.probe();
    this.guard = guard;
    this.engineProfile = EngineProfile.read(settings.seccompProfile());
    this.client = new EngineClient(settings.socket());
    this.workspaces = dataDir.toAbsolutePath().normalize().resolve("workspaces");
    this.instanceId = instanceId;
    this.dataLabel = Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
    this.cpuLimit = settings.cpuLimit();
    this.status = probe();
    this.probedAt = System.nanoTime();
    if (!cpuLimit) {
      warnCpuLimitDisabled();
    }
    log.info(
        "{} backend: {} ({})",
        settings.engine(),
        status.available() ? "available" : "unavailable",
        status.reason());
    logSeccomp();
  }

  private void logSeccomp() {
    if (guard.available()) {
      log.info(
          "{} backend: seccomp {} (box-guard) under {}",
          settings.engine(),
          guard.policy(),
          engineProfile.description());
    } else {
      log.warn(
          "{} backend: seccomp none of Box's own: {}; containers get {} only (health reports"
              + " seccomp: {})",
          settings.engine(),
          guard.reason(),
          engineProfile.description(),
          seccompEnforced());
    }
  }

  /** The {@code seccomp} entry of health: never more than what is applied. */
  private String seccompEnforced() {
    return guard.available() ? guard.policy() : engineProfile.enforcedName();
  }

  /**
   * Checks an operator's seccomp profile file as the backend will read it: a readable JSON object
   * with a {@code defaultAction}.
   *
   * @throws IllegalArgumentException with a message for the operator when it cannot be used
   */
  public static void checkSeccompProfile(Path file) {
    String error = EngineProfile.read(file).error();
    if (error != null) {
      throw new IllegalArgumentException(error);
    }
  }

  @Override
  public String name() {
    return settings.engine();
  }

  private void warnCpuLimitDisabled() {
    log.warn("{}", cpuLimitDisabledWarning(settings.engine()));
  }

  /** The warning for a disabled CPU quota, naming the engine and its section of the config. */
  static String cpuLimitDisabledWarning(String engine) {
    return (engine.equals("podman") ? "Podman" : "Docker")
        + " sandbox CPU limit is disabled by config (box."
        + engine
        + ".cpu_limit_enabled=false); containers will be started without --cpus.";
  }

  /**
   * Applies LangBot's {@code box.docker} (or {@code box.podman}) section: {@code
   * cpu_limit_enabled}, a boolean or a string where {@code 0} and {@code false} disable the CPU
   * quota of containers created afterwards.
   */
  @Override
  public void configure(Map<String, Object> section) {
    if (!section.containsKey("cpu_limit_enabled")) {
      return;
    }
    Object value = section.get("cpu_limit_enabled");
    boolean enabled;
    if (value instanceof Boolean b) {
      enabled = b;
    } else if (value instanceof String text) {
      String v = text.strip().toLowerCase(Locale.ROOT);
      enabled = !(v.equals("0") || v.equals("false"));
    } else {
      throw new BoxValidationException(
          "box." + name() + ".cpu_limit_enabled must be a boolean or a string");
    }
    if (enabled != cpuLimit) {
      cpuLimit = enabled;
      status = probe();
      probedAt = System.nanoTime();
      if (!enabled) {
        warnCpuLimitDisabled();
      }
    }
  }

  @Override
  public BackendStatus status() {
    BackendStatus current = status;
    if (!current.available() && System.nanoTime() - probedAt > REPROBE_INTERVAL.toNanos()) {
      current = probe();
      status = current;
      probedAt = System.nanoTime();
    }
    return current;
  }

  private BackendStatus probe() {
    Map<String, String> enforced = new LinkedHashMap<>();
    String mechanism = settings.engine() + "-cgroup";
    enforced.put("memory", mechanism);
    enforced.put("pids", mechanism);
    enforced.put("cpu", cpuLimit ? mechanism : "none");
    enforced.put("timeout", "kill");
    enforced.put("output", "bounded");
    enforced.put(
        "egress",
        firewall.available() ? firewall.status() : firewall.status() + "; network on is refused");
    enforced.put("seccomp", seccompEnforced());
    Set<String> capabilities =
        Set.of(
            BoxCapabilities.IMAGES,
            BoxCapabilities.READ_ONLY_ROOTFS,
            BoxCapabilities.PROCESS_MEMORY_LIMIT);
    String where = " at " + settings.socket();
    String profileError = engineProfile.error();
    if (profileError != null) {
      return new BackendStatus(name(), false, profileError, enforced);
    }
    if (!Files.exists(settings.socket())) {
      return new BackendStatus(
          name(), false, "no " + engineTitle() + " API socket" + where + hint(), enforced);
    }
    try {
      EngineClient.Response version = client.call("GET", "/version", null, PROBE_TIMEOUT);
      if (!version.ok()) {
        return new BackendStatus(
            name(),
            false,
            engineTitle() + " answered " + version.status() + where + ": " + version.message(),
            enforced);
      }
      JsonNode v = version.json();
      String reason =
          engineTitle()
              + " "
              + v.path("Version").asText("?")
              + " (API "
              + v.path("ApiVersion").asText("?")
              + ")"
              + where;
      return new BackendStatus(name(), true, reason, enforced, capabilities);
    } catch (IOException e) {
      return new BackendStatus(
          name(),
          false,
          "cannot reach " + engineTitle() + where + ": " + e.getMessage() + hint(),
          enforced);
    }
  }

  private String engineTitle() {
    return settings.engine().equals("podman") ? "Podman" : "Docker Engine";
  }

  private String hint() {
    return settings.engine().equals("podman")
        ? " (start it with: podman system service --time=0 unix://" + settings.socket() + ")"
        : " (start dockerd, or set docker_host)";
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    BackendStatus current = status();
    if (!current.available()) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          settings.engine() + " backend is unavailable: " + current.reason());
    }
    boolean networkOn = spec.network() == BoxNetworkMode.ON;
    if (networkOn && !firewall.available()) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "network on is unavailable on this server: the container could not be kept off the host"
              + " (egress: "
              + firewall.status()
              + ")");
    }
    String image = image(spec);
    String name = containerName(spec.sessionId());
    Map<String, Object> body = createBody(spec, image);
    MountOwnership.prepare(spec, workspaces, SANDBOX_UID);
    String containerId = null;
    try {
      containerId = create(name, body, image);
      EngineClient.Response started =
          client.call("POST", "/containers/" + containerId + "/start", null, CALL_TIMEOUT);
      if (!started.ok()) {
        throw new BoxException(
            BoxErrorCode.INTERNAL_ERROR,
            settings.engine() + " backend error: cannot start container: " + started.message());
      }
      if (networkOn) {
        closeEgress(containerId, spec);
      }
      return new ContainerSandbox(
          client, name, containerId, SANDBOX_USER, BASE_ENV, guard.available());
    } catch (IOException e) {
      remove(containerId == null ? name : containerId);
      // An engine that went away is unavailable (503, probed again later), not an internal error.
      BackendStatus now = probe();
      status = now;
      probedAt = System.nanoTime();
      if (!now.available()) {
        throw new BoxException(
            BoxErrorCode.BACKEND_UNAVAILABLE,
            settings.engine() + " backend is unavailable: " + now.reason(),
            e);
      }
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, settings.engine() + " backend error: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      remove(containerId == null ? name : containerId);
      throw e;
    }
  }

  /**
   * Loads the egress firewall into the container's network namespace, found through the pid of its
   * init; DNS may go to the resolvers the engine wrote into the container's resolv.conf.
   */
  private void closeEgress(String containerId, SandboxSpec spec) throws IOException {
    EngineClient.Response inspect =
        client.call("GET", "/containers/" + containerId + "/json", null, CALL_TIMEOUT);
    long pid = inspect.json().path("State").path("Pid").asLong(0);
    if (!inspect.ok() || pid <= 0) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR,
          settings.engine()
              + " backend error: cannot find the container's process to close its network: "
              + inspect.message());
    }
    List<Cidr> resolvers = resolvers(inspect.json().path("ResolvConfPath").asText(""));
    firewall.apply(
        pid,
        EgressRuleset.render(
            egress, spec.egress(), NetnsFirewall.hostAddresses(), List.of(), resolvers));
  }

  /** The nameservers of a resolv.conf the engine wrote; none when it cannot be read. */
  private static List<Cidr> resolvers(String resolvConf) {
    if (resolvConf.isEmpty()) {
      return List.of();
    }
    List<Cidr> out = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(Path.of(resolvConf))) {
        String[] words = line.strip().split("\\s+");
        if (words.length >= 2 && words[0].equals("nameserver")) {
          try {
            out.add(Cidr.parse(words[1]));
          } catch (IllegalArgumentException e) {
            log.warn("ignoring nameserver {} of {}", words[1], resolvConf);
          }
        }
      }
    } catch (IOException e) {
      log.warn("cannot read the container's resolv.conf {}: {}", resolvConf, e.toString());
    }
    return out;
  }

  private String image(SandboxSpec spec) {
    String configured = settings.defaultImage();
    if (configured != null
        && (spec.image().isBlank() || spec.image().equals(BoxSpec.DEFAULT_IMAGE))) {
      return configured;
    }
    return spec.image();
  }

  /** {@code langbot-box-<normalised id>-<8 hex>}, as LangBot's runtime names its containers. */
  static String containerName(String sessionId) {
    return "langbot-box-"
        + SandboxNames.normalise(sessionId)
        + "-"
        + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  }

  private Map<String, Object> createBody(SandboxSpec spec, String image) {
    Map<String, Object> host = new LinkedHashMap<>();
    host.put("CapDrop", List.of("ALL"));
    List<String> securityOpt = new ArrayList<>(List.of("no-new-privileges"));
    engineProfile.securityOpt(settings.engine()).ifPresent(securityOpt::add);
    host.put("SecurityOpt", securityOpt);
    // box-guard's init replaces the engine's: see HOLDER.
    host.put("Init", !guard.available());
    host.put("PidsLimit", spec.pidsLimit());
    long memory = spec.memoryMb() * 1024L * 1024L;
    host.put("Memory", memory);
    host.put("MemorySwap", memory);
    if (cpuLimit) {
      host.put("NanoCpus", Math.round(spec.cpus() * 1_000_000_000d));
    }
    if (spec.network() == BoxNetworkMode.OFF) {
      host.put("NetworkMode", "none");
    }
    if (spec.readOnlyRootfs()) {
      host.put("ReadonlyRootfs", true);
      host.put("Tmpfs", Map.of("/tmp", "rw,nosuid,nodev,size=64m,mode=1777"));
    }
    // Mounts, not Binds: a path containing ':' cannot be mistaken for a mode or a second path.
    List<Map<String, Object>> mounts = new ArrayList<>();
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      mounts.add(mount(workspace));
    }
    spec.extraMounts().forEach(m -> mounts.add(mount(m)));
    Path binary = guard.binary();
    if (binary != null) {
      mounts.add(mount(new SandboxMount(binary, SyscallGuard.SANDBOX_PATH, true)));
    }
    host.put("Mounts", mounts);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("Image", image);
    body.put("Cmd", binary != null ? SyscallGuard.sandboxInitCommand(HOLDER) : HOLDER);
    body.put("Entrypoint", List.of());
    // An image's HEALTHCHECK would be exec'd by the engine itself, outside box-guard.
    body.put("Healthcheck", Map.of("Test", List.of("NONE")));
    body.put("User", SANDBOX_USER);
    body.put("WorkingDir", "/");
    body.put("Env", ContainerSandbox.envList(BASE_ENV));
    body.put(
        "Labels",
        Map.of(
            "langbot.box",
            "true",
            "langbot.session_id",
            spec.sessionId(),
            "langbot.box.instance_id",
            instanceId,
            "dev.box.data",
            dataLabel));
    body.put("HostConfig", host);
    return body;
  }

  private static Map<String, Object> mount(SandboxMount mount) {
    return Map.of(
        "Type", "bind",
        "Source", mount.hostPath().toString(),
        "Target", mount.sandboxPath(),
        "ReadOnly", mount.readOnly());
  }

  /** Creates the container, pulling the image first when the engine does not have it. */
  private String create(String name, Map<String, Object> body, String image) throws IOException {
    String path = "/containers/create?name=" + URLEncoder.encode(name, StandardCharsets.UTF_8);
    EngineClient.Response created = client.call("POST", path, body, CALL_TIMEOUT);
    if (created.status() == 404) {
      pull(image);
      created = client.call("POST", path, body, CALL_TIMEOUT);
    }
    String id = created.json().path("Id").asText("");
    if (!created.ok() || id.isEmpty()) {
      throw new BoxException(
          created.status() == 400 ? BoxErrorCode.VALIDATION_ERROR : BoxErrorCode.INTERNAL_ERROR,
          settings.engine() + " backend error: cannot create container: " + created.message());
    }
    return id;
  }

  /**
   * Pulls {@code image}, waiting at most the pull timeout; a failed or timed-out pull is an error
   * and no container is created.
   */
  private void pull(String image) {
    log.info("image {} is not present in {}; pulling it", image, settings.engine());
    String path = "/images/create?fromImage=" + URLEncoder.encode(image, StandardCharsets.UTF_8);
    EngineClient.Response answer;
    try {
      answer = client.call("POST", path, null, settings.pullTimeout());
    } catch (java.net.SocketTimeoutException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "image "
              + image
              + " is not present and pulling it timed out after "
              + settings.pullTimeout().toSeconds()
              + " s");
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "image " + image + " is not present and cannot be pulled: " + e.getMessage());
    }
    String error = answer.ok() ? pullError(answer.body()) : answer.message();
    if (error != null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "image " + image + " is not present and cannot be pulled: " + oneLine(error));
    }
  }

  /** The error in a pull's progress stream (one JSON object per line), or null. */
  private static @Nullable String pullError(byte[] body) {
    for (String line : new String(body, StandardCharsets.UTF_8).split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode node = new EngineClient.Response(200, line.getBytes(StandardCharsets.UTF_8)).json();
      if (node.hasNonNull("error")) {
        return node.get("error").asText();
      }
      if (node.hasNonNull("errorDetail")) {
        return node.get("errorDetail").path("message").asText();
      }
    }
    return null;
  }

  private void remove(String nameOrId) {
    try {
      client.call(
          "DELETE",
          "/containers/" + URLEncoder.encode(nameOrId, StandardCharsets.UTF_8) + "?force=1",
          null,
          CALL_TIMEOUT);
    } catch (IOException e) {
      log.warn("cannot remove container {}: {}", nameOrId, e.toString());
    }
  }

  @Override
  public void removeOrphans() {
    if (!status().available()) {
      return;
    }
    String filters = "{\"label\":[\"langbot.box=true\",\"dev.box.data=" + dataLabel + "\"]}";
    try {
      EngineClient.Response list =
          client.call(
              "GET",
              "/containers/json?all=1&filters="
                  + URLEncoder.encode(filters, StandardCharsets.UTF_8),
              null,
              CALL_TIMEOUT);
      if (!list.ok()) {
        log.warn("cannot list orphaned containers: {}", list.message());
        return;
      }
      for (JsonNode container : list.json()) {
        String owner = container.path("Labels").path("langbot.box.instance_id").asText("");
        if (!owner.equals(instanceId)) {
          String id = container.path("Id").asText();
          log.info(
              "removing container left by an earlier instance: {}",
              container.path("Names").path(0).asText(id));
          remove(id);
        }
      }
    } catch (IOException e) {
      log.warn("cannot list orphaned containers: {}", e.toString());
    }
  }

  @Override
  public void close() {
    // Connections are per request; nothing to release.
  }

  private static String oneLine(String text) {
    String line = text.strip().replaceAll("\\s+", " ");
    return line.length() > 300 ? line.substring(0, 300) : line;
  }
}
