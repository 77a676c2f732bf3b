package dev.box.backend.nsjail;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.core.Hashes;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.HostCommand;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.IdMaps;
import dev.box.sandbox.IdmappedMounts;
import dev.box.sandbox.Launcher;
import dev.box.sandbox.NamespaceHost;
import dev.box.sandbox.NamespaceSettings;
import dev.box.sandbox.NamespaceStart;
import dev.box.sandbox.PreStarted;
import dev.box.sandbox.SandboxEtc;
import dev.box.sandbox.SandboxShape;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nsjail backend: a session is a live nsjail jail whose pid 1 is a holder process; commands are
 * spawned into it with nsenter and limited by the session's cgroups, exactly as on the bubblewrap
 * backend (whose launcher, cgroup drivers, user-mode network and sandbox type it uses). nsjail
 * builds the namespaces, the uid maps and the mount tree from a configuration file Box writes
 * ({@link JailConfig}); Box then masks the revealing files of /proc, forbids nested user namespaces
 * and, with the network on, puts the firewall and slirp4netns in place before the session is handed
 * out.
 *
 * <p>With {@code poolSize} above 0 a few jails of the {@linkplain SandboxShape#pooled pooled shape}
 * wait, started ahead of their sessions ({@link PreStarted}); since nsjail's mounts are private, a
 * workspace reaches one by being a new private workspace that the jail's slot replaces, or (a
 * {@code host_path}, any other) by a bind moved into the jail's own mount namespace ({@link
 * HandoverSlots}).
 */
public final class NsjailBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(NsjailBackend.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(15);

  private final NamespaceSettings settings;
  private final @Nullable Path guard;
  private final String baseName;
  private final Path jailsDir;
  private final Path workspaces;
  private final Path etcDir;
  private final @Nullable Path nsjail;
  private final @Nullable Launcher launcher;
  private final Path setpriv;
  private final NamespaceStart starts;
  private final BackendStatus status;
  private final PreStarted preStarted;
  private final IdmappedMounts idmapped;

  /**
   * Probes the host and prepares the backend. Jails and cgroups are tagged with the hash of the
   * data directory, so that two data directories never touch each other's.
   *
   * @param nsjailPath the nsjail binary to use, or null to look for {@code nsjail} in the system
   *     directories
   */
  public NsjailBackend(NamespaceSettings settings, @Nullable Path nsjailPath) {
    Path data = settings.dataDir().toAbsolutePath().normalize();
    this.settings = settings;
    this.guard = settings.guard();
    this.baseName = tagOf(data);
    this.jailsDir = data.resolve("nsjail");
    this.etcDir = data.resolve("nsjail-etc");
    this.workspaces = data.resolve("workspaces");
    this.nsjail = nsjailPath != null ? nsjailPath : HostCommand.find("nsjail");
    Launcher launcher = Launcher.onHost(guard != null);
    this.launcher = launcher;
    this.setpriv = launcher != null ? launcher.setpriv() : Path.of("/usr/bin/setpriv");
    this.starts =
        new NamespaceStart("nsjail", settings, workspaces, baseName, NsjailBackend::failure);
    this.status = probe(nsjailPath);
    this.preStarted =
        settings.preStarted(
            name(),
            status.available(),
            HandoverSlots.store(workspaces, data),
            this::acceptsPooled,
            this::startFresh);
    this.idmapped = settings.idmappedMounts(name());
    log.info(
        "nsjail backend: {} ({})",
        status.available() ? "available" : "unavailable",
        status.reason());
  }

  /**
   * The tag of a data directory's jails: their cgroups' base name, and the start of their holders'
   * {@code $0} ({@code <tag>/<sandbox>}).
   */
  public static String tagOf(Path dataDir) {
    return "box-nsjail-" + Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
  }

  @Override
  public String name() {
    return "nsjail";
  }

  @Override
  public BackendStatus status() {
    return preStarted.reported(
        idmapped.reported(status),
        "no pre-started jails (pool_size 0)",
        joinsHostPaths()
            ? ""
            : "; nsjail's mounts are private and box-mounter is not running, so only a new private"
                + " workspace is served from the pool, never a host_path or a workspace with files");
  }

  @Override
  public @Nullable PoolLevel poolLevel() {
    return preStarted.level();
  }

  /** How many sessions have taken a pre-started jail so far (for tests and diagnostics). */
  public long pooledTakes() {
    return preStarted.taken();
  }

  private BackendStatus probe(@Nullable Path configured) {
    Map<String, String> enforced = starts.enforced(settings.guardPolicy());
    enforced.put("nsjail_time_limit", "off: the server's exec timeout kills the process tree");
    Path binary = nsjail;
    if (binary == null || !Files.isExecutable(binary)) {
      String reason =
          configured != null
              ? "nsjail not found at " + configured + " (nsjail_path)"
              : "nsjail not found in /usr/bin, /bin, /usr/sbin, /sbin or /usr/local/bin (build it"
                  + " with scripts/nsjail, or set nsjail_path)";
      return new BackendStatus(name(), false, reason, enforced);
    }
    String unmet = NamespaceHost.unmet(launcher != null, "nsjail", "jails");
    if (unmet != null) {
      return new BackendStatus(name(), false, unmet, enforced);
    }
    return starts.withAgentCapabilities(
        NamespaceHost.tryOut(name(), "nsjail", "nsjail " + binary, enforced, () -> trial(binary)));
  }

  /** Runs {@code exit 0} in a throwaway jail: null when it ran, else why not. */
  private @Nullable String trial(Path binary) throws IOException, InterruptedException {
    SandboxEtc.write(etcDir);
    Files.createDirectories(jailsDir);
    Path config = jailsDir.resolve("probe.cfg");
    Files.writeString(config, configText("probe", true, false, List.of(), null, "exit 0"));
    Process p = nsjailProcess(List.of(), binary, config).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8);
    boolean exited = p.waitFor(10, TimeUnit.SECONDS);
    Files.deleteIfExists(config);
    if (!exited || p.exitValue() != 0) {
      p.destroyForcibly();
      return "nsjail cannot create a jail here: " + NamespaceHost.oneLine(output);
    }
    return null;
  }

  private String configText(
      String name,
      boolean readOnlyRoot,
      boolean networkOn,
      List<SandboxMount> mounts,
      NamespaceStart.@Nullable AgentMounts agent,
      String command) {
    return JailConfig.render(
        name,
        settings.sandboxUid(),
        readOnlyRoot,
        networkOn,
        etcDir,
        guard,
        SyscallGuard.SANDBOX_PATH,
        mounts,
        setpriv,
        agent,
        command);
  }

  /**
   * nsjail with the configuration file {@code config}, started through {@code prefix}; nothing else
   * is on its command line.
   */
  private static ProcessBuilder nsjailProcess(List<String> prefix, Path binary, Path config) {
    List<String> argv = new ArrayList<>(prefix);
    argv.addAll(List.of(binary.toString(), "--config", config.toString()));
    ProcessBuilder builder = new ProcessBuilder(argv);
    builder.environment().clear();
    builder.environment().put("PATH", "/usr/bin:/bin");
    builder.directory(Path.of("/").toFile());
    return builder;
  }

  /**
   * Takes a pre-started jail when {@code spec} is of the pool's shape and one waits; otherwise
   * starts one.
   */
  @Override
  public Sandbox start(SandboxSpec spec) {
    // A folder only its owner can use comes from an idmapped mount. The slot, already the sandbox
    // user's, replaces the workspace directory.
    return idmapped.start(spec, workspaces, null, preStarted, this::startFresh);
  }

  private Sandbox startFresh(SandboxSpec spec) {
    Path config = jailsDir.resolve(spec.sandboxName() + ".cfg");
    try {
      return starts.start(spec, status, launcher, attempt -> startJail(spec, config, attempt));
    } finally {
      try {
        Files.deleteIfExists(config);
      } catch (IOException e) {
        log.warn("cannot remove {}: {}", config, e.toString());
      }
    }
  }

  /**
   * Writes the jail's configuration to {@code config}, starts nsjail with it, and returns the pid
   * of the jail's init once its holder is ready.
   */
  private long startJail(SandboxSpec spec, Path config, NamespaceStart.Attempt attempt)
      throws IOException, InterruptedException, ExecutionException {
    Path binary = Objects.requireNonNull(nsjail, "nsjail");
    Path nsenterPath = Objects.requireNonNull(launcher, "launcher").nsenter();
    Files.createDirectories(jailsDir);
    Files.writeString(
        config,
        configText(
            baseName + "/" + spec.sandboxName(),
            spec.readOnlyRootfs(),
            attempt.networkOn(),
            JailConfig.mountsOf(spec.workspace(), spec.extraMounts()),
            attempt.agent(),
            attempt.agent() != null ? JailConfig.AGENT_HOLDER : JailConfig.HOLDER));
    // The spawn makes nsjail die with this server, and its jail with it.
    Process process = attempt.spawn(nsjailProcess(List.of(), binary, config));
    JailStart.awaitReady(process, starts.readers(), START_TIMEOUT);
    long initPid = JailStart.initPid(process);
    IdMaps.forbidNestedNamespaces(nsenterPath, initPid);
    JailStart.maskProc(nsenterPath, initPid);
    // Before anything of the request runs in the namespace: never a moment without it.
    attempt.applyFirewall(initPid);
    return initPid;
  }

  /** The error of a start that failed unexpectedly. */
  private static BoxException failure(Exception e) {
    return new BoxException(
        BoxErrorCode.INTERNAL_ERROR,
        "nsjail backend error: " + NamespaceHost.oneLine(String.valueOf(e)),
        e);
  }

  @Override
  public void removeOrphans() {
    JailStart.killOthers(baseName, jailsDir, settings.instanceId() + "_");
    starts.cgroups().removeOthers(settings.instanceId() + "_");
    starts.removeOrphanAgents(settings.instanceId());
    preStarted.removeOthers();
    idmapped.removeOthers();
  }

  /** Whether a spec of the pooled shape can take a jail: its workspace can be given to one. */
  private boolean acceptsPooled(SandboxSpec spec) {
    return preStarted.slots() instanceof HandoverSlots s && s.accepts(spec);
  }

  /** Whether pre-started jails serve host_path workspaces. */
  boolean joinsHostPaths() {
    return preStarted.slots() instanceof HandoverSlots s && s.joinsHostPaths();
  }

  @Override
  public void close() {
    preStarted.close();
    starts.close();
    idmapped.close();
  }
}
