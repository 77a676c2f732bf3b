package dev.box.backend.docker;

import dev.box.api.BoxBackendUnavailableException;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.core.Hashes;
import dev.box.core.agent.AgentLink;
import dev.box.core.agent.AgentSockets;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.PoolLevel;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.NetnsFirewall;
import dev.box.core.session.SandboxNames;
import dev.box.core.time.Ticker;
import dev.box.guard.ExecAgent;
import dev.box.guard.SyscallGuard;
import dev.box.sandbox.SandboxPool;
import dev.box.sandbox.SandboxShape;
import dev.box.sandbox.WorkspaceSlots;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

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
   * @param sandboxLease how long a container outlives its server
   * @param writableRootMb what a container with a writable root may write to it, in MiB, where the
   *     engine's storage bounds it ({@link WritableRoot}); 0 for no bound
   * @param execAgent whether processes start through an exec agent in each container (where the
   *     host's cgroups allow) rather than through the engine's exec API
   * @param poolSize how many containers of the {@linkplain SandboxShape#pooled pooled shape} wait,
   *     created and started ahead of their sessions; 0 for none
   */
  public record Settings(
      String engine,
      Path socket,
      @Nullable String defaultImage,
      boolean cpuLimit,
      Duration pullTimeout,
      @Nullable Path seccompProfile,
      Duration sandboxLease,
      int writableRootMb,
      boolean execAgent,
      int poolSize) {

    /** Settings without pre-started containers. */
    public Settings(
        String engine,
        Path socket,
        @Nullable String defaultImage,
        boolean cpuLimit,
        Duration pullTimeout,
        @Nullable Path seccompProfile,
        Duration sandboxLease,
        int writableRootMb,
        boolean execAgent) {
      this(
          engine,
          socket,
          defaultImage,
          cpuLimit,
          pullTimeout,
          seccompProfile,
          sandboxLease,
          writableRootMb,
          execAgent,
          0);
    }

    /** How long, by default, a container outlives its server. */
    public static final Duration DEFAULT_SANDBOX_LEASE = Duration.ofSeconds(30);

    /** What, by default, a container with a writable root may write to it, in MiB. */
    public static final int DEFAULT_WRITABLE_ROOT_MB = 1024;

    /** Settings with the default sandbox lease. */
    public Settings(
        String engine,
        Path socket,
        @Nullable String defaultImage,
        boolean cpuLimit,
        Duration pullTimeout,
        @Nullable Path seccompProfile) {
      this(
          engine,
          socket,
          defaultImage,
          cpuLimit,
          pullTimeout,
          seccompProfile,
          DEFAULT_SANDBOX_LEASE,
          DEFAULT_WRITABLE_ROOT_MB,
          true,
          0);
    }

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
  private final NetnsFirewall firewall;
  private final Path workspaces;
  private final SyscallGuard guard;
  private final EngineProfile engineProfile;
  private final ContainerCreateBody createBody;
  private final ContainerEgress egress;
  private final EngineContainers containers;
  private final EngineProbe probe;
  private final Ticker ticker = Ticker.system();
  private final CpuQuota cpuQuota;
  private final SandboxLease lease;
  private final WritableRoot writableRoot;
  private final @Nullable Path agent;

  /** Why containers no longer get the exec agent, or null while they do. */
  private volatile @Nullable String agentUnusable;

  private final Path agents;
  private final String instanceId;
  private final Path poolRoot;
  private final @Nullable WorkspaceSlots slots;
  private final @Nullable SandboxPool pool;

  /** How long a container's exec agent may take to connect, and to answer each request. */
  private static final Duration AGENT_CONNECT_TIMEOUT = Duration.ofSeconds(15);

  private static final Duration AGENT_REPLY_TIMEOUT = Duration.ofSeconds(5);

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
    this.firewall = NetnsFirewall.probe();
    this.guard = guard;
    this.engineProfile = EngineProfile.read(settings.seccompProfile());
    this.client = new EngineClient(settings.socket());
    this.workspaces = dataDir.toAbsolutePath().normalize().resolve("workspaces");
    String dataLabel = Hashes.shortSha256(dataDir.toAbsolutePath().normalize().toString());
    this.cpuQuota = new CpuQuota(settings.engine(), settings.cpuLimit());
    this.lease = new SandboxLease(dataDir, settings.sandboxLease());
    this.writableRoot = new WritableRoot(settings.engine(), client, settings.writableRootMb());
    this.agent = settings.execAgent() ? agentBinary(dataDir) : null;
    this.agents = AgentSockets.root(dataDir);
    this.instanceId = instanceId;
    this.createBody =
        new ContainerCreateBody(
            settings.engine(), engineProfile, guard, instanceId, dataLabel, lease, agent);
    this.egress = new ContainerEgress(client, settings.engine(), firewall, egress, CALL_TIMEOUT);
    this.containers =
        new EngineContainers(
            client,
            settings.engine(),
            new ImagePuller(client, settings.engine(), settings.pullTimeout()),
            instanceId,
            dataLabel,
            CALL_TIMEOUT,
            ConcurrentHashMap.newKeySet());
    this.probe =
        new EngineProbe(
            new EngineCheck(
                settings.engine(),
                settings.socket(),
                client,
                firewall,
                engineProfile,
                seccompEnforced(),
                cpuQuota::enabled,
                writableRoot::enforced),
            ticker);
    BackendStatus status = probe.status();
    cpuQuota.warnIfDisabled();
    log.info(
        "{} backend: {} ({})",
        settings.engine(),
        status.available() ? "available" : "unavailable",
        status.reason());
    logSeccomp();
    this.poolRoot = dataDir.toAbsolutePath().normalize().resolve(settings.engine() + "-pool");
    this.slots =
        settings.poolSize() > 0 && status.available()
            ? WorkspaceSlots.openOrNull(poolRoot.resolve(instanceId), settings.engine(), dataDir)
            : null;
    WorkspaceSlots open = slots;
    this.pool =
        open == null
            ? null
            : new SandboxPool(
                settings.engine(),
                SandboxShape.pooled(),
                settings.poolSize(),
                instanceId,
                BoxSpec.DEFAULT_IMAGE,
                open,
                this::poolable,
                spec -> startContainer(spec, true));
  }

  /**
   * Whether a spec of the pooled shape may take a pre-started container: not a persistent one (its
   * container must carry its session id, by which the next server adopts it) and one of the pool's
   * image.
   */
  private boolean poolable(SandboxSpec spec) {
    return !spec.persistent() && image(spec.image()).equals(image(BoxSpec.DEFAULT_IMAGE));
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
      SandboxPool p = pool;
      if (p != null) {
        // Waiting containers were made with the other quota.
        p.drain();
      }
    }
  }

  @Override
  public BackendStatus status() {
    return SandboxPool.reported(
        probe.status(),
        pool,
        "no pre-started containers (pool_size 0, or the slots cannot be mounted)",
        "; persistent sessions never take one");
  }

  @Override
  public @Nullable PoolLevel poolLevel() {
    return SandboxPool.levelOf(pool);
  }

  /** How many sessions have taken a pre-started container so far (for tests and diagnostics). */
  public long pooledTakes() {
    SandboxPool p = pool;
    return p == null ? 0 : p.taken();
  }

  /**
   * Takes a pre-started container when {@code spec} is a non-persistent one of the pool's shape and
   * image and one waits, binding the workspace into it; otherwise creates one.
   */
  @Override
  public Sandbox start(SandboxSpec spec) {
    checkCanStart(spec);
    Sandbox taken = SandboxPool.takeFrom(pool, spec, workspaces, ContainerCreateBody.SANDBOX_UID);
    return taken != null ? taken : startContainer(spec, false);
  }

  private Sandbox startContainer(SandboxSpec spec, boolean pooled) {
    checkCanStart(spec);
    String image = image(spec.image());
    String name = containerName(spec.sessionId());
    try {
      lease.start();
    } catch (IOException e) {
      throw new BoxBackendUnavailableException(
          settings.engine() + ": cannot write the sandbox lease: " + e.getMessage());
    }
    MountOwnership.prepare(spec, workspaces, ContainerCreateBody.SANDBOX_UID);
    String containerId = null;
    AgentLink link = null;
    try {
      Path agentDir = null;
      if (agent != null && agentUnusable == null) {
        agentDir = agents.resolve(AgentSockets.dirName(instanceId, name));
        link = AgentLink.listen(name, agentDir, ExecAgent.SOCKET_NAME, AGENT_REPLY_TIMEOUT);
      }
      containerId = create(spec, name, image, agentDir, pooled);
      containers.start(containerId);
      if (spec.network() == BoxNetworkMode.ON) {
        egress.close(containerId, spec);
      }
      ContainerSandbox sandbox =
          new ContainerSandbox(client, name, containerId, guard.available(), ticker);
      if (link != null) {
        ContainerCgroup cgroup = containerCgroup(sandbox.containerId());
        if (cgroup == null) {
          // This server cannot see the engine's cgroups (it runs in a container of its own): the
          // container's processes start through the engine, as they do without an agent.
          closeLink(link);
          return sandbox;
        }
        connectAgent(sandbox, link, cgroup);
      }
      return sandbox;
    } catch (IOException e) {
      closeLink(link);
      containers.remove(containerId == null ? name : containerId);
      throw engineError(e);
    } catch (RuntimeException e) {
      closeLink(link);
      containers.remove(containerId == null ? name : containerId);
      throw e;
    }
  }

  /**
   * Waits for the agent of {@code sandbox}'s container to connect to {@code link}, then starts the
   * container's processes through it; a link that breaks later removes the container.
   */
  private void connectAgent(ContainerSandbox sandbox, AgentLink link, ContainerCgroup cgroup)
      throws IOException {
    link.awaitAgent(AGENT_CONNECT_TIMEOUT, sandbox::destroy);
    sandbox.useAgent(new ContainerAgent(link, cgroup, sandbox::running));
  }

  /**
   * The cgroup of container {@code containerId} as this server sees it, or null when it cannot (the
   * server runs in a container of its own, with its own view of /sys/fs/cgroup): then no container
   * of this backend uses the agent from now on, and the log says why, once.
   */
  private @Nullable ContainerCgroup containerCgroup(String containerId) throws IOException {
    EngineClient.Response inspected =
        client.call("GET", "/containers/" + containerId + "/json", null, CALL_TIMEOUT);
    long initPid = inspected.json().path("State").path("Pid").asLong(0);
    if (!inspected.ok() || initPid <= 0) {
      throw new IOException("the container's init is not running: " + inspected.message());
    }
    try {
      return ContainerCgroup.of(initPid);
    } catch (IOException e) {
      agentUnusable = e.getMessage();
      log.warn(
          "{} backend: processes start through the engine, not the exec agent: {}",
          settings.engine(),
          e.getMessage());
      return null;
    }
  }

  private static void closeLink(@Nullable AgentLink link) {
    if (link != null) {
      link.close();
    }
  }

  /**
   * Creates the container of {@code spec}, its writable root bounded where the engine's storage
   * bounds it; an engine that turns out to refuse the bound gets the container without it (and
   * health says so from then on).
   */
  private String create(
      SandboxSpec spec, String name, String image, @Nullable Path agentDir, boolean pooled)
      throws IOException {
    Map<String, String> storage =
        spec.readOnlyRootfs() ? null : writableRoot.storageOpt(() -> imageBytes(image));
    try {
      return containers.create(
          name, createBody.of(spec, image, cpuQuota.enabled(), storage, agentDir, pooled), image);
    } catch (BoxException e) {
      if (storage == null || !writableRoot.refused(String.valueOf(e.getMessage()))) {
        throw e;
      }
      probe.refresh();
      return containers.create(
          name, createBody.of(spec, image, cpuQuota.enabled(), null, agentDir, pooled), image);
    }
  }

  /** The size of {@code image}, pulled first when the engine does not have it. */
  private long imageBytes(String image) throws IOException {
    OptionalLong bytes = WritableRoot.imageBytes(client, image);
    if (bytes.isEmpty()) {
      containers.puller().pull(image);
      bytes = WritableRoot.imageBytes(client, image);
    }
    return bytes.orElse(0);
  }

  /** The exec agent in {@code dataDir}, or null when it or the host's cgroups are unavailable. */
  private @Nullable Path agentBinary(Path dataDir) {
    if (!ContainerCgroup.hostSupported()) {
      log.warn("{} backend: processes start through the engine: no cgroup tree", settings.engine());
      return null;
    }
    ExecAgent installed = ExecAgent.install(dataDir);
    if (!installed.available()) {
      log.warn(
          "{} backend: processes start through the engine: {}",
          settings.engine(),
          installed.reason());
    }
    return installed.binary();
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
    BackendStatus current = status();
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

  /** {@code langbot-box-<normalised id>-<8 hex>}, as LangBot's runtime names its containers. */
  static String containerName(String sessionId) {
    return "langbot-box-"
        + SandboxNames.normalise(sessionId)
        + "-"
        + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  }

  @Override
  public void removeOrphans() {
    if (status().available()) {
      containers.removeOrphans(false);
      Set<Path> left = containers.agentDirs();
      String mine = AgentSockets.instancePrefix(instanceId);
      AgentLink.removeStale(
          agents, dir -> dir.startsWith(mine) || left.contains(agents.resolve(dir)));
    }
    WorkspaceSlots.removeOthers(poolRoot, instanceId);
  }

  @Override
  public void removeOrphansSparingPersistent() {
    if (status().available()) {
      containers.removeOrphans(true);
    }
  }

  /**
   * Takes over the running container that a crashed predecessor left for the persistent session
   * {@code spec}: the container, its processes and its workspace mount are as they were, and the
   * lease this server beats keeps it running.
   */
  @Override
  public @Nullable Sandbox adopt(SandboxSpec spec) {
    if (!spec.persistent() || !status().available()) {
      return null;
    }
    EngineContainers.Adopted found = containers.adopt(spec.sessionId());
    if (found == null) {
      return null;
    }
    try {
      lease.start();
    } catch (IOException e) {
      throw new BoxBackendUnavailableException(
          settings.engine() + ": cannot write the sandbox lease: " + e.getMessage());
    }
    ContainerSandbox sandbox =
        new ContainerSandbox(client, found.name(), found.id(), guard.available(), ticker);
    Path agentDir = found.agentDir();
    if (agent != null && agentDir != null && agents.equals(agentDir.getParent())) {
      // The container's holder starts its agent again within a second of the crashed server's.
      AgentLink link = null;
      try {
        link = AgentLink.listen(found.name(), agentDir, ExecAgent.SOCKET_NAME, AGENT_REPLY_TIMEOUT);
        ContainerCgroup cgroup = containerCgroup(found.id());
        if (cgroup == null) {
          closeLink(link);
        } else {
          connectAgent(sandbox, link, cgroup);
        }
      } catch (IOException e) {
        closeLink(link);
        log.warn(
            "{}: the agent of adopted container {} did not connect ({}); its processes start"
                + " through the engine",
            settings.engine(),
            found.name(),
            e.getMessage());
      }
    }
    return sandbox;
  }

  /** Stops beating the sandbox lease, as the death of the server would: tests only. */
  void stopLease() {
    lease.close();
  }

  @Override
  public void close() {
    SandboxPool p = pool;
    if (p != null) {
      p.close();
    }
    WorkspaceSlots s = slots;
    if (s != null) {
      s.close();
    }
    // Connections are per request; the engine client's reader and poller threads end here.
    client.close();
    lease.close();
  }
}
