package dev.box.backend.docker;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.api.time.Ticker;
import dev.box.core.Hashes;
import dev.box.core.agent.AgentLink;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.RootCopies;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.NetnsFirewall;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.BackendRuntime;
import dev.box.sandbox.IdmappedMounts;
import dev.box.sandbox.PreStarted;
import dev.box.sandbox.WorkspaceSlots;
import dev.box.sandbox.engine.EngineClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
 *
 * <p>{@link #open} does the I/O of a start (installing the guard and the agent, reading the
 * profile, probing the engine); what earlier servers left is {@link ContainerLeftovers}'.
 */
public final class ContainerBackend implements SandboxBackend {
  private static final Logger log = LoggerFactory.getLogger(ContainerBackend.class);
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

  /** How long a copy of a writable root may take: the engine writes what the container changed. */
  private static final Duration COMMIT_TIMEOUT = Duration.ofMinutes(5);

  private final ContainerSettings settings;
  private final EngineClient client;
  private final NetnsFirewall firewall;
  private final Path workspaces;
  private final SyscallGuard guard;
  private final ContainerCreator creator;
  private final ContainerEgress egress;
  private final EngineContainers containers;
  private final EngineProbe probe;
  private final Ticker ticker;
  private final CpuQuota cpuQuota;
  private final SandboxLease lease;
  private final ContainerAgents agents;
  private final ContainerLeftovers leftovers;
  private final PreStarted preStarted;
  private final IdmappedMounts idmapped;
  private final ContainerRoots roots;

  /** The parts {@link #open} makes: the engine's client and what was read or probed before. */
  private record Parts(
      Path dataDir,
      String instanceId,
      EgressPolicy egress,
      SyscallGuard guard,
      NetnsFirewall firewall,
      EngineProfile profile,
      EngineClient client,
      @Nullable Path agent,
      BackendRuntime runtime) {}

  private ContainerBackend(ContainerSettings settings, Parts parts) {
    Path data = parts.dataDir().toAbsolutePath().normalize();
    String engine = settings.engine();
    String dataLabel = Hashes.shortSha256(data.toString());
    this.settings = settings;
    this.client = parts.client();
    this.firewall = parts.firewall();
    this.guard = parts.guard();
    this.ticker = parts.runtime().ticker();
    this.workspaces = data.resolve("workspaces");
    this.cpuQuota = new CpuQuota(engine, settings.cpuLimit());
    this.lease =
        new SandboxLease(
            parts.dataDir(),
            settings.sandboxLease(),
            parts.runtime().threads().apply("box-sandbox-lease"));
    WritableRoot writableRoot = new WritableRoot(engine, client, settings.writableRootMb());
    this.agents =
        new ContainerAgents(
            engine,
            parts.agent(),
            parts.dataDir(),
            parts.instanceId(),
            client.threads().deadlines());
    this.egress = new ContainerEgress(client, engine, firewall, parts.egress(), CALL_TIMEOUT);
    this.containers =
        new EngineContainers(
            client,
            engine,
            new ImagePuller(client, engine, settings.pullTimeout()),
            parts.instanceId(),
            dataLabel,
            CALL_TIMEOUT,
            ConcurrentHashMap.newKeySet());
    this.probe =
        new EngineProbe(
            new EngineCheck(
                engine,
                settings.socket(),
                client,
                firewall,
                parts.profile(),
                parts.profile().enforcedUnder(guard),
                cpuQuota::enabled,
                writableRoot::enforced,
                agents::usable),
            ticker);
    this.creator =
        new ContainerCreator(
            client,
            containers,
            new ContainerCreateBody(
                engine,
                parts.profile(),
                guard,
                parts.instanceId(),
                dataLabel,
                lease,
                parts.agent()),
            cpuQuota,
            writableRoot,
            probe::refresh);
    this.leftovers =
        new ContainerLeftovers(
            engine,
            containers,
            agents,
            lease,
            found ->
                new ContainerSandbox(
                    client, found.name(), found.id(), guard.available(), ticker, found.root()));
    this.roots = new ContainerRoots(client, engine, dataLabel, COMMIT_TIMEOUT);
    BackendStatus status = probe.status();
    cpuQuota.warnIfDisabled();
    log.info(
        "{} backend: {} ({})",
        engine,
        status.available() ? "available" : "unavailable",
        status.reason());
    parts.profile().logUnder(engine, guard);
    this.idmapped =
        new IdmappedMounts(
            data, engine, parts.instanceId(), ContainerCreateBody.SANDBOX_UID, guard.available());
    this.preStarted =
        PreStarted.open(
            engine,
            data,
            parts.instanceId(),
            status.available() ? settings.poolSize() : 0,
            WorkspaceSlots.store(engine, parts.dataDir()),
            this::poolable,
            spec -> startContainer(spec, true),
            parts.runtime());
  }

  /**
   * Installs box-guard in the data directory, reads the operator's seccomp profile if any, connects
   * to the engine and probes it.
   *
   * @param settings which engine and how to use it
   * @param dataDir the server's data directory (its hash labels the containers)
   * @param instanceId the id of this server instance
   * @param egress the operator's egress policy for network-on containers
   * @param runtime the clock and the threads the backend runs on
   */
  public static ContainerBackend open(
      ContainerSettings settings,
      Path dataDir,
      String instanceId,
      EgressPolicy egress,
      BackendRuntime runtime) {
    return open(settings, dataDir, instanceId, egress, SyscallGuard.install(dataDir), runtime);
  }

  /**
   * Why the engine of {@code settings} cannot serve without opening a backend for it (no probe of
   * the host, nothing installed): its API socket is not there. Null when it is, and only an opened
   * backend's probe tells more.
   */
  public static @Nullable String missingSocket(ContainerSettings settings) {
    return EngineCheck.missingSocket(settings.engine(), settings.socket());
  }

  /** As the public {@code open}, with the guard given (tests use an unavailable one). */
  static ContainerBackend open(
      ContainerSettings settings,
      Path dataDir,
      String instanceId,
      EgressPolicy egress,
      SyscallGuard guard,
      BackendRuntime runtime) {
    return new ContainerBackend(
        settings,
        new Parts(
            dataDir,
            instanceId,
            egress,
            guard,
            NetnsFirewall.probe(),
            EngineProfile.read(settings.seccompProfile()),
            new EngineClient(settings.socket(), runtime),
            settings.execAgent() ? ContainerAgents.install(settings.engine(), dataDir) : null,
            runtime));
  }

  /**
   * Whether a spec of the pooled shape may take a pre-started container: not a persistent one (its
   * container must carry its session id, by which the next server adopts it), one of the pool's
   * image, and not one that starts from a copied root.
   */
  private boolean poolable(SandboxSpec spec) {
    return !spec.persistent()
        && spec.root() == null
        && image(spec.image()).equals(image(BoxSpec.DEFAULT_IMAGE));
  }

  @Override
  public String name() {
    return settings.engine();
  }

  /**
   * Applies LangBot's {@code box.docker} (or {@code box.podman}) section: {@code
   * cpu_limit_enabled}, a boolean or a string where {@code 0} and {@code false} disable the CPU
   * quota of containers created afterwards.
   */
  @Override
  public void configure(Map<String, Object> section) {
    if (cpuQuota.configure(section)) {
      probe.refresh();
      cpuQuota.warnIfDisabled();
      // Waiting containers were made with the other quota.
      preStarted.drain();
    }
  }

  @Override
  public BackendStatus status() {
    BackendStatus probed = idmapped.reported(probe.status());
    return preStarted.reported(
        probed.available() && agents.binary() != null
            ? probed.withCapability(BoxCapabilities.PORTS)
            : probed,
        "no pre-started containers (pool_size 0, or the slots cannot be mounted)",
        "; persistent sessions never take one");
  }

  /**
   * The copies of containers' writable roots: images committed from them ({@link ContainerRoots}).
   */
  @Override
  public RootCopies roots() {
    return roots;
  }

  @Override
  public @Nullable PoolLevel poolLevel() {
    return preStarted.level();
  }

  /** How many sessions have taken a pre-started container so far (for tests and diagnostics). */
  public long pooledTakes() {
    return preStarted.taken();
  }

  /**
   * Takes a pre-started container when {@code spec} is a non-persistent one of the pool's shape and
   * image and one waits, binding the workspace into it; otherwise creates one. A folder only its
   * owner can use comes from an idmapped mount made here ({@link IdmappedMounts}): the engine binds
   * that mount, as it does any host path.
   */
  @Override
  public Sandbox start(SandboxSpec spec) {
    checkCanStart(spec);
    if (spec.root() == null && ContainerRoots.isCopy(image(spec.image()))) {
      throw new BoxValidationException(
          "image "
              + spec.image()
              + " is a copy of a container's writable root that Box keeps: a session starts from"
              + " one by fork or from_snapshot only");
    }
    String noIdmap =
        spec.persistent() ? "a persistent session's container outlives the server's mounts" : null;
    return idmapped.start(spec, workspaces, noIdmap, preStarted, s -> startContainer(s, false));
  }

  private Sandbox startContainer(SandboxSpec spec, boolean pooled) {
    checkCanStart(spec);
    String name = EngineContainers.nameFor(spec.sessionId());
    ContainerLeftovers.startLease(lease, settings.engine());
    MountOwnership.prepare(spec, workspaces, ContainerCreateBody.SANDBOX_UID);
    String containerId = null;
    AgentLink link = null;
    String held = null;
    try {
      String root = spec.root();
      held = root == null ? null : roots.use(root);
      String image = held != null ? held : image(spec.image());
      link = agents.listen(name);
      containerId =
          creator.create(spec, name, image, link == null ? null : agents.dirOf(name), pooled);
      containers.start(containerId);
      if (spec.network() == BoxNetworkMode.ON) {
        egress.close(containerId, spec);
      }
      ContainerSandbox sandbox =
          new ContainerSandbox(client, name, containerId, guard.available(), ticker, held);
      if (link != null) {
        agents.attach(sandbox, link);
      }
      return sandbox;
    } catch (IOException e) {
      abandon(link, containerId == null ? name : containerId, held);
      throw engineError(e);
    } catch (RuntimeException e) {
      abandon(link, containerId == null ? name : containerId, held);
      throw e;
    }
  }

  /** Undoes a start that failed: the agent's link, the container, the root it held. */
  private void abandon(@Nullable AgentLink link, String container, @Nullable String held) {
    closeLink(link);
    containers.remove(container);
    if (held != null) {
      ContainerRoots.untag(client, held);
    }
  }

  private static void closeLink(@Nullable AgentLink link) {
    if (link != null) {
      link.close();
    }
  }

  /** An engine that went away is unavailable (503, probed again later), not an internal error. */
  private BoxException engineError(IOException e) {
    BackendStatus now = probe.refresh();
    if (!now.available()) {
      return new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          settings.engine() + " backend is unavailable: " + now.reason(),
          e);
    }
    return new BoxException(
        BoxErrorCode.INTERNAL_ERROR, settings.engine() + " backend error: " + e.getMessage(), e);
  }

  /**
   * Refuses a start that cannot succeed here: the engine is down, or no firewall for network on.
   */
  private void checkCanStart(SandboxSpec spec) {
    // The engine's probe alone decides: the pool's first start runs while the constructor has not
    // yet assigned what status() adds to it.
    BackendStatus current = probe.status();
    if (!current.available()) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          settings.engine() + " backend is unavailable: " + current.reason());
    }
    if (spec.network() == BoxNetworkMode.ON && !firewall.available()) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "network on is unavailable on this server: the container could not be kept off the host"
              + " (egress: "
              + firewall.status()
              + ")");
    }
  }

  private String image(String requested) {
    String configured = settings.defaultImage();
    if (configured != null && (requested.isBlank() || requested.equals(BoxSpec.DEFAULT_IMAGE))) {
      return configured;
    }
    return requested;
  }

  @Override
  public void removeOrphans() {
    if (status().available()) {
      leftovers.removeOrphans(false);
      roots.removeUnused(containers.heldRoots());
    }
    preStarted.removeOthers();
    idmapped.removeOthers();
  }

  @Override
  public void removeOrphansSparingPersistent() {
    if (status().available()) {
      leftovers.removeOrphans(true);
    }
  }

  /**
   * Takes over the running container that a crashed predecessor left for the persistent session
   * {@code spec} ({@link ContainerLeftovers#adopt}).
   */
  @Override
  public @Nullable Sandbox adopt(SandboxSpec spec) {
    return spec.persistent() && status().available() ? leftovers.adopt(spec) : null;
  }

  /** Stops beating the sandbox lease, as the death of the server would: tests only. */
  void stopLease() {
    lease.close();
  }

  @Override
  public void close() {
    preStarted.close();
    idmapped.close();
    // Connections are per request; the engine client's reader and poller threads end here.
    client.close();
    lease.close();
  }
}
