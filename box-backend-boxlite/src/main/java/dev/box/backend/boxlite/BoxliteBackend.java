package dev.box.backend.boxlite;

import dev.box.api.BoxBackendUnavailableException;
import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.remote.RemoteBackend;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sessions as BoxLite boxes: each session is a micro-VM that a BoxLite server ({@code boxlite
 * serve}) creates from an OCI image, and every process an execution in it, its stdio on the
 * execution's attach WebSocket. A box's name says which data directory, server instance and session
 * it belongs to ({@link BoxNames}), by which the next server on the same data directory removes
 * those left behind and adopts a persistent session's box.
 *
 * <p>A box sees no host directory (BoxLite's volumes are its own, not host folders): {@code
 * host_path} and {@code extra_mounts} are refused, and the workspace lives on the box's own disk.
 * The VM's size follows the session's {@code cpus} and {@code memory_mb}, but that is a VM's size,
 * not a limit on the session's processes, so it is reported as {@code none}; network off is the
 * box's {@code outbound.mode: disabled}.
 */
public final class BoxliteBackend extends RemoteBackend {
  private static final Logger log = LoggerFactory.getLogger(BoxliteBackend.class);

  /** BoxLite's bounds on a box's size (CreateBoxRequest). */
  private static final int MAX_CPUS = 32;

  private static final int MIN_MEMORY_MIB = 128;

  /**
   * How each limit is enforced: the VM's size is not a limit on the session's processes, so memory,
   * CPU and process count are {@code none}.
   */
  private static final Map<String, String> ENFORCED =
      Map.ofEntries(
          Map.entry("memory", "none"),
          Map.entry("pids", "none"),
          Map.entry("cpu", "none"),
          Map.entry("network", "outbound.mode (off: BoxLite removes the box's network interface)"),
          Map.entry("egress", "none: a network-on box reaches what the BoxLite server allows"),
          Map.entry("timeout", "kill"),
          Map.entry("output", "bounded"),
          Map.entry("host_mounts", "refused: the workspace lives on the box's own disk"));

  private static final String NO_TOKEN =
      "no BoxLite token configured (boxlite_token or BOX_BOXLITE_TOKEN)";

  private final Set<String> adopted = ConcurrentHashMap.newKeySet();
  private volatile BoxliteSettings settings;

  /**
   * @param settings how to reach the BoxLite server
   * @param dataDir the server's state directory (its hash names the boxes)
   * @param instanceId the running server instance, which names its boxes
   */
  public BoxliteBackend(BoxliteSettings settings, Path dataDir, String instanceId) {
    super("boxlite", dataDir, instanceId, Duration.ofSeconds(10), "BoxLite boxes");
    this.settings = settings;
  }

  @Override
  public BackendStatus status() {
    BoxliteSettings s = settings;
    String reason = unavailable(s);
    if (reason != null) {
      return new BackendStatus(name(), false, reason, ENFORCED);
    }
    return new BackendStatus(
        name(),
        true,
        "BoxLite boxes at " + s.url(),
        ENFORCED,
        Set.of(BoxCapabilities.IMAGES, BoxCapabilities.PROCESS_MEMORY_LIMIT));
  }

  /** Why the server cannot be used now, or null when it answers and accepts the token. */
  private @Nullable String unavailable(BoxliteSettings s) {
    String token = s.token();
    if (token == null) {
      return NO_TOKEN;
    }
    try {
      new BoxliteApi(http, s.url(), token).whoAmI();
      return null;
    } catch (BoxliteApi.Refused e) {
      return e.status == 401
          ? "the BoxLite server at " + s.url() + " refused the token (401): check boxlite_token"
          : "the BoxLite server at " + s.url() + " is not usable: " + e.getMessage();
    } catch (IOException e) {
      return "the BoxLite server at " + s.url() + " is unreachable: " + e;
    }
  }

  @Override
  public void configure(Map<String, Object> section) {
    for (String key : section.keySet()) {
      if (!Set.of("url", "token").contains(key)) {
        throw new BoxValidationException(
            "unknown boxlite setting '" + key + "' (known: url, token)");
      }
    }
    try {
      settings = settings.with(text(section, "url"), text(section, "token"));
    } catch (IllegalArgumentException e) {
      throw new BoxValidationException(String.valueOf(e.getMessage()));
    }
  }

  private static @Nullable String text(Map<String, Object> section, String key) {
    Object value = section.get(key);
    return value == null || String.valueOf(value).isBlank() ? null : String.valueOf(value);
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    refuseWhatCannotApply(spec);
    BoxliteSettings s = settings;
    BoxliteApi api = api(s);
    String boxId;
    try {
      boxId = api.create(createBody(spec, s));
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE, "cannot create a BoxLite box: " + e.getMessage(), e);
    }
    BoxliteSandbox sandbox = new BoxliteSandbox(boxId, api);
    try {
      api.start(boxId);
    } catch (IOException e) {
      sandbox.destroy();
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "BoxLite box " + boxId + " did not start: " + e.getMessage(),
          e);
    }
    return sandbox;
  }

  /**
   * Refuses what a box cannot give, rather than start one without it. A read-only root, which every
   * session asks for unless it says otherwise, is not refused but reported: the backend does not
   * declare {@code read_only_rootfs}, and a box's root is its own writable disk.
   */
  private static void refuseWhatCannotApply(SandboxSpec spec) {
    SandboxMount workspace = spec.workspace();
    if (!spec.extraMounts().isEmpty() || (workspace != null && !workspace.boxOwned())) {
      throw new BoxValidationException(
          "host_path and extra_mounts are not available on the boxlite backend: a BoxLite box"
              + " mounts no host directory");
    }
    if (workspace != null && workspace.readOnly()) {
      throw new BoxValidationException(
          "host_path_mode ro is not available on the boxlite backend: the workspace lives on the"
              + " box's own disk, which BoxLite cannot make read-only");
    }
    if (!spec.egress().isEmpty()) {
      throw new BoxValidationException(
          "egress rules cannot be applied by the boxlite backend: its boxes are VMs that Box's"
              + " firewall does not reach");
    }
  }

  private Map<String, Object> createBody(SandboxSpec spec, BoxliteSettings s) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("image", image(spec, s));
    if (spec.cpus() > 0) {
      body.put("cpus", Math.clamp((long) Math.ceil(spec.cpus()), 1, MAX_CPUS));
    }
    if (spec.memoryMb() > 0) {
      body.put("memory_mib", Math.max(MIN_MEMORY_MIB, spec.memoryMb()));
    }
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      body.put("working_dir", workspace.sandboxPath());
    }
    body.put("name", BoxNames.name(dataLabel, instanceId, spec.persistent(), spec.sessionId()));
    body.put("env", Map.of());
    body.put(
        "network",
        Map.of(
            "outbound",
            Map.of("mode", spec.network() == BoxNetworkMode.ON ? "enabled" : "disabled")));
    // Box removes its boxes itself; BoxLite must not stop one under a long-running session.
    body.put("auto_stop", 0);
    body.put("auto_delete", 0);
    return body;
  }

  /** The spec's image, or the configured one for Box's default image. */
  private static String image(SandboxSpec spec, BoxliteSettings s) {
    String image = spec.image();
    String configured = s.image();
    return (image.isBlank() || image.equals(BoxSpec.DEFAULT_IMAGE)) && configured != null
        ? configured
        : image;
  }

  /**
   * The running box of the persistent session {@code spec} that an earlier server on this data
   * directory left, taken over with everything running in it; null when there is none.
   */
  @Override
  public @Nullable Sandbox adopt(SandboxSpec spec) {
    BoxliteSettings s = settings;
    if (!spec.persistent() || s.token() == null) {
      return null;
    }
    BoxliteApi api = api(s);
    try {
      for (BoxliteApi.Listed box : api.list()) {
        BoxNames.Owner owner = BoxNames.owner(box.name());
        if (owner != null
            && owner.dataLabel().equals(dataLabel)
            && owner.persistent()
            && BoxNames.isSession(owner, spec.sessionId())
            && box.status().equals("running")) {
          adopted.add(box.boxId());
          return new BoxliteSandbox(box.boxId(), api);
        }
      }
    } catch (IOException e) {
      log.warn("cannot look for the BoxLite box of session {}: {}", spec.sessionId(), e.toString());
    }
    return null;
  }

  /** The boxes whose name says they are Box's; a box this server adopted is its own. */
  @Override
  protected List<Machine> machines() throws IOException {
    if (settings.token() == null) {
      return List.of();
    }
    List<Machine> found = new ArrayList<>();
    for (BoxliteApi.Listed box : api(settings).list()) {
      BoxNames.Owner owner = BoxNames.owner(box.name());
      if (owner != null) {
        boolean ours = BoxNames.isInstance(owner, instanceId) || adopted.contains(box.boxId());
        found.add(new Machine(box.boxId(), owner.dataLabel(), ours, owner.persistent()));
      }
    }
    return found;
  }

  @Override
  protected void remove(String boxId) throws IOException {
    api(settings).remove(boxId);
  }

  private BoxliteApi api(BoxliteSettings s) {
    String token = s.token();
    if (token == null) {
      throw new BoxBackendUnavailableException(NO_TOKEN);
    }
    return new BoxliteApi(http, s.url(), token);
  }
}
