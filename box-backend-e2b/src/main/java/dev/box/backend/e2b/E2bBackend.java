package dev.box.backend.e2b;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.MountOwnership;
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
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Sessions as E2B sandboxes (or sandboxes of a self-hosted service that speaks E2B's API): each
 * session is a remote VM created from a template through the control plane, and driven through its
 * envd. Sandboxes are created with a short timeout that a timer sets again while the session lives,
 * so that one the server loses track of expires by itself; the next server on the same data
 * directory kills those still running (found by their metadata).
 *
 * <p>What E2B does not let a client set per sandbox (memory, CPU, process count: the template's VM
 * size decides) is reported as {@code none}; network off is E2B's {@code allow_internet_access}.
 */
public final class E2bBackend extends RemoteBackend {
  /** The sandbox timeout set at creation and at each refresh. */
  static final Duration SANDBOX_TIMEOUT = Duration.ofSeconds(300);

  /** How often the timeout of a live sandbox is set again. */
  static final Duration REFRESH_INTERVAL = Duration.ofSeconds(60);

  static final String LABEL_BOX = "langbot.box";
  static final String LABEL_DATA = "dev.box.data";
  static final String LABEL_INSTANCE = "dev.box.instance";
  static final String LABEL_SESSION = "dev.box.session";
  static final String LABEL_PERSISTENT = "dev.box.persistent";
  static final String LABEL_HOST_MOUNT = "host-mount";

  private final Path workspaces;
  private final int sandboxUid;
  private final ScheduledExecutorService timer;
  private volatile E2bSettings settings;

  /**
   * @param settings how to reach the service
   * @param dataDir the server's state directory (its hash tags the sandboxes)
   * @param instanceId the running server instance, which tags its sandboxes
   * @param sandboxUid the host uid that owns files the sandbox creates in read-write host mounts
   * @param timer sets live sandboxes' timeouts again; the composition root makes it, this backend
   *     shuts it down when closed
   */
  public E2bBackend(
      E2bSettings settings,
      Path dataDir,
      String instanceId,
      int sandboxUid,
      ScheduledExecutorService timer) {
    super("e2b", dataDir, instanceId, Duration.ofSeconds(20), "E2B sandboxes");
    this.settings = settings;
    this.workspaces = dataDir.toAbsolutePath().normalize().resolve("workspaces");
    this.sandboxUid = sandboxUid;
    this.timer = timer;
  }

  @Override
  public BackendStatus status() {
    E2bSettings s = settings;
    Map<String, String> enforced = new LinkedHashMap<>();
    enforced.put("memory", "none");
    enforced.put("pids", "none");
    enforced.put("cpu", "none");
    enforced.put("network", "allow_internet_access (E2B's firewall)");
    // The sandbox is a remote VM: Box's egress firewall (private ranges, the operator's and the
    // session's rules) cannot be loaded into it. A session that asks for rules is refused.
    enforced.put("egress", "none: a network-on E2B sandbox reaches what E2B allows");
    enforced.put("timeout", "kill");
    enforced.put("output", "bounded");
    enforced.put("host_mounts", "copied before and after each process (no live view)");
    if (s.apiKey() == null) {
      return new BackendStatus(
          name(), false, "no E2B API key configured (e2b_api_key or E2B_API_KEY)", enforced);
    }
    return new BackendStatus(
        name(),
        true,
        "E2B sandboxes from template " + s.template() + " at " + s.apiUrl(),
        enforced,
        Set.of(
            BoxCapabilities.IMAGES,
            BoxCapabilities.HOST_PATHS,
            BoxCapabilities.PROCESS_MEMORY_LIMIT));
  }

  @Override
  public void configure(Map<String, Object> section) {
    for (String key : section.keySet()) {
      if (!Set.of("api_key", "api_url", "template").contains(key)) {
        throw new BoxValidationException(
            "unknown e2b setting '" + key + "' (known: api_key, api_url, template)");
      }
    }
    try {
      settings =
          settings.with(
              text(section, "api_key", settings.apiKey() != null),
              text(section, "api_url", false),
              text(section, "template", false));
    } catch (IllegalArgumentException e) {
      throw new BoxValidationException(String.valueOf(e.getMessage()));
    }
  }

  /**
   * A configured value, ignored when the environment already set it ({@code E2B_API_KEY} wins, as
   * in LangBot's runtime).
   */
  private static @Nullable String text(Map<String, Object> section, String key, boolean fixed) {
    Object value = section.get(key);
    return fixed || value == null || String.valueOf(value).isBlank() ? null : String.valueOf(value);
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    if (!spec.egress().isEmpty()) {
      throw new BoxValidationException(
          "egress rules cannot be applied by the e2b backend: its sandboxes are remote VMs that"
              + " Box's firewall does not reach");
    }
    E2bSettings s = settings;
    ControlPlane controlPlane = controlPlane(s);
    // The same rule as the local backends: a directory the sandbox user could not use is refused,
    // though here the server, not the sandbox user, reads and writes it.
    MountOwnership.prepare(spec, workspaces, sandboxUid);
    List<SandboxMount> mounts = new ArrayList<>();
    if (spec.workspace() != null) {
      mounts.add(spec.workspace());
    }
    mounts.addAll(spec.extraMounts());
    ControlPlane.Created created;
    try {
      created =
          controlPlane.create(
              template(spec, s),
              SANDBOX_TIMEOUT,
              metadata(spec, mounts),
              Map.of(),
              spec.network() == BoxNetworkMode.ON);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE, "cannot create an E2B sandbox: " + e.getMessage(), e);
    }
    String domain = created.domain() == null ? s.defaultDomain() : created.domain();
    Envd envd =
        new Envd(
            http,
            s.envdUrl().replace("{sandboxID}", created.sandboxId()).replace("{domain}", domain),
            created.envdAccessToken());
    E2bSandbox sandbox =
        new E2bSandbox(
            created.sandboxId(),
            controlPlane,
            envd,
            box -> new MountSync(box, envd, mounts, sandboxUid));
    try {
      sandbox.prepare();
    } catch (IOException | RuntimeException e) {
      sandbox.destroy();
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "E2B sandbox " + created.sandboxId() + " could not be prepared: " + e.getMessage(),
          e);
    }
    sandbox.keepAlive(
        timer.scheduleAtFixedRate(
            () -> sandbox.refreshTimeout(SANDBOX_TIMEOUT),
            REFRESH_INTERVAL.toSeconds(),
            REFRESH_INTERVAL.toSeconds(),
            TimeUnit.SECONDS));
    return sandbox;
  }

  /** The spec's image as a template name, or the configured template for Box's default image. */
  private static String template(SandboxSpec spec, E2bSettings s) {
    String image = spec.image();
    return image.isBlank() || image.equals(BoxSpec.DEFAULT_IMAGE) ? s.template() : image;
  }

  private Map<String, String> metadata(SandboxSpec spec, List<SandboxMount> mounts) {
    Map<String, String> metadata = new LinkedHashMap<>();
    metadata.put(LABEL_BOX, "true");
    metadata.put(LABEL_DATA, dataLabel);
    metadata.put(LABEL_INSTANCE, instanceId);
    metadata.put(LABEL_SESSION, spec.sessionId());
    metadata.put(LABEL_PERSISTENT, Boolean.toString(spec.persistent()));
    metadata.put(LABEL_HOST_MOUNT, HostMountMetadata.json(mounts));
    return metadata;
  }

  /** The running sandboxes whose metadata marks them as this data directory's. */
  @Override
  protected List<Machine> machines() throws IOException {
    if (settings.apiKey() == null) {
      return List.of();
    }
    return controlPlane(settings).list(Map.of(LABEL_BOX, "true", LABEL_DATA, dataLabel)).stream()
        .map(
            listed ->
                new Machine(
                    listed.sandboxId(),
                    listed.metadata().get(LABEL_DATA),
                    instanceId.equals(listed.metadata().get(LABEL_INSTANCE)),
                    "true".equals(listed.metadata().get(LABEL_PERSISTENT))))
        .toList();
  }

  @Override
  protected void remove(String sandboxId) throws IOException {
    controlPlane(settings).kill(sandboxId);
  }

  private ControlPlane controlPlane(E2bSettings s) {
    String key = s.apiKey();
    if (key == null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "no E2B API key configured (e2b_api_key or E2B_API_KEY)");
    }
    return new ControlPlane(http, s.apiUrl(), key);
  }

  @Override
  public void close() {
    timer.shutdownNow();
    super.close();
  }
}
