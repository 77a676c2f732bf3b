package dev.box.sandbox;

import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxNetworkMode;
import dev.box.core.agent.AgentLink;
import dev.box.core.agent.AgentSockets;
import dev.box.core.agent.LinkDeadlines;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.HostCommand;
import dev.box.core.backend.MountOwnership;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.core.net.EgressRuleset;
import dev.box.core.net.NetnsFirewall;
import dev.box.guard.ExecAgent;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the namespace backends (bubblewrap, nsjail) start a sandbox alike: they refuse the network
 * when it cannot be kept off the host, hand the mounts to the sandbox user, make the sandbox's
 * cgroups, put the egress firewall and slirp4netns in place around the backend's own jail, and tear
 * down what a start that failed left behind. It owns the backend's spawner, reader and agent timer
 * threads.
 */
public final class NamespaceStart {
  private static final Logger log = LoggerFactory.getLogger(NamespaceStart.class);
  private final String backend;
  private final int sandboxUid;
  private final Path workspaces;
  private final EgressPolicy egress;
  private final NetnsFirewall firewall;
  private final @Nullable Path slirp4netns;
  private final @Nullable Path setsid;
  private final CgroupDriver cgroups;
  private final ExecutorService spawner;
  private final ExecutorService readers;
  private final LinkDeadlines agentDeadlines;
  private final Function<Exception, BoxException> failure;
  private final @Nullable Path agent;
  private final Path agents;

  /** How long a sandbox's exec agent may take to connect, and to answer each request. */
  private static final Duration AGENT_CONNECT_TIMEOUT = Duration.ofSeconds(15);

  private static final Duration AGENT_REPLY_TIMEOUT = Duration.ofSeconds(5);

  /**
   * The mounts of a sandbox's exec agent.
   *
   * @param binary the agent on the host, mounted read-only at {@link ExecAgent#SANDBOX_PATH}
   * @param socketDir the directory of the agent's socket, mounted read-only at {@link
   *     ExecAgent#SOCKET_DIR}
   */
  public record AgentMounts(Path binary, Path socketDir) {}

  /**
   * Probes the host's firewall, slirp4netns and, when asked to, cgroups; installs the exec agent
   * when {@code settings} want it and the guard is available.
   *
   * @param backend the backend's name, for its threads and its messages
   * @param workspaces the directory of the sandboxes' workspaces
   * @param baseName the base cgroup of this data directory's sandboxes
   * @param failure the error a start that failed with an unexpected exception reports
   */
  public NamespaceStart(
      String backend,
      NamespaceSettings settings,
      Path workspaces,
      String baseName,
      Function<Exception, BoxException> failure) {
    int sandboxUid = settings.sandboxUid();
    if (sandboxUid <= 0) {
      throw new IllegalArgumentException("sandbox_uid must be greater than 0: " + sandboxUid);
    }
    BackendRuntime runtime = settings.runtime();
    @Nullable Path agent =
        agentBinary(backend, settings.dataDir(), settings.execAgent() && settings.guard() != null);
    this.backend = backend;
    this.sandboxUid = sandboxUid;
    this.workspaces = workspaces;
    this.egress = settings.egress();
    this.firewall = NetnsFirewall.probe();
    this.slirp4netns = HostCommand.find("slirp4netns");
    this.setsid = HostCommand.find("setsid");
    this.cgroups =
        settings.useCgroups()
            ? NamespaceHost.probeCgroups(baseName, runtime.ticker())
            : new NoCgroupDriver();
    // One spawner thread that lives as long as the backend: a jail dies with the thread that forked
    // it (ParentDeath), so jails must not be forked by pool threads that may retire.
    this.spawner = runtime.singleThread("box-" + backend + "-spawner");
    this.readers = runtime.cachedThreads("box-" + backend + "-reader");
    this.agentDeadlines =
        new LinkDeadlines(AGENT_REPLY_TIMEOUT, runtime.timer("box-" + backend + "-agent-timer"));
    this.failure = failure;
    this.agent = cgroups instanceof NoCgroupDriver ? null : agent;
    this.agents =
        AgentSockets.root(Objects.requireNonNull(workspaces.toAbsolutePath().getParent()));
  }

  /**
   * The status {@code probed} with what the sandboxes' exec agent brings, when the sandboxes get
   * one: terminals, and their ports reachable through its pipe ({@link Sandbox#portPipe}); and
   * pause where their cgroups freeze.
   */
  public BackendStatus withAgentCapabilities(BackendStatus probed) {
    if (!probed.available()) {
      return probed;
    }
    BackendStatus status =
        agent != null
            ? probed.withCapability(BoxCapabilities.TERMINAL).withCapability(BoxCapabilities.PORTS)
            : probed;
    return cgroups.freezes() ? status.withCapability(BoxCapabilities.PAUSE) : status;
  }

  /**
   * The exec agent installed in {@code dataDir} for {@code backend}, or null when not {@code
   * wanted} or not available (then processes start through nsenter, and the log says why).
   */
  private static @Nullable Path agentBinary(String backend, Path dataDir, boolean wanted) {
    if (!wanted) {
      return null;
    }
    ExecAgent agent = ExecAgent.install(dataDir);
    if (!agent.available()) {
      log.warn("{} backend: processes start through nsenter: {}", backend, agent.reason());
    }
    return agent.binary();
  }

  /** Removes the agent sockets of sandboxes of other instances than {@code instanceId}. */
  public void removeOrphanAgents(String instanceId) {
    String mine = AgentSockets.instancePrefix(instanceId);
    AgentLink.removeStale(agents, name -> name.startsWith(mine));
  }

  /** The platform threads that read the jails' and slirp4netns's output. */
  public ExecutorService readers() {
    return readers;
  }

  /** The cgroup driver the sandboxes are limited by. */
  public CgroupDriver cgroups() {
    return cgroups;
  }

  /**
   * How each limit is enforced ({@link NamespaceHost#enforced}), with processes run through the
   * syscall filter {@code seccomp}.
   */
  public Map<String, String> enforced(String seccomp) {
    return NamespaceHost.enforced(cgroups, networkStatus(), seccomp, sandboxUid);
  }

  /** How network-on sandboxes are kept off the host: {@code nftables}, or {@code none: why}. */
  public String networkStatus() {
    return NamespaceHost.networkStatus(slirp4netns, firewall);
  }

  /** A backend's own part of a start: the process that makes the namespaces and runs the holder. */
  @FunctionalInterface
  public interface Jail {
    /**
     * Starts the sandbox's process with {@link Attempt#spawn}, and returns the pid of the sandbox's
     * init once the holder is ready; {@link Attempt#applyFirewall} must run before anything of the
     * request does.
     */
    long start(Attempt attempt)
        throws IOException, ExecutionException, TimeoutException, InterruptedException;
  }

  /** One start of a sandbox, as its {@link Jail} sees it. */
  public final class Attempt {
    private final SandboxSpec spec;
    private final Path setpriv;
    private @Nullable Process process;
    private @Nullable AgentMounts agentMounts;

    private Attempt(SandboxSpec spec, Path setpriv) {
      this.spec = spec;
      this.setpriv = setpriv;
    }

    /**
     * The exec agent's mounts, which the jail must make and whose agent it must run as the holder
     * (as the sandbox's PID 1); null when processes start through the launcher.
     */
    public @Nullable AgentMounts agent() {
      return agentMounts;
    }

    /** Whether the sandbox has the network on. */
    public boolean networkOn() {
      return spec.network() == BoxNetworkMode.ON;
    }

    /**
     * Starts the sandbox's process on the spawner thread, dying with this server from its first
     * instruction ({@link ParentDeath}), and records it so that a start that fails kills it.
     */
    public Process spawn(ProcessBuilder builder) throws ExecutionException, InterruptedException {
      builder.command(
          ParentDeath.guarded(setpriv, setsid, ProcessHandle.current().pid(), builder.command()));
      Process started = spawner.submit(builder::start).get();
      this.process = started;
      return started;
    }

    /** With the network on, puts the egress firewall in the namespace of {@code initPid}. */
    public void applyFirewall(long initPid) {
      if (networkOn()) {
        firewall.apply(
            initPid,
            EgressRuleset.render(
                egress,
                spec.egress(),
                NetnsFirewall.hostAddresses(),
                UserModeNetwork.forbidden(),
                List.of(UserModeNetwork.DNS)));
      }
    }
  }

  /**
   * Starts the sandbox {@code spec} with {@code jail}, then its slirp4netns with the network on.
   *
   * @param status the backend's status; the backend's binaries are all there when it is available
   * @param launcher starts processes inside the sandbox, or null when the host has no nsenter
   * @throws BoxException {@code BACKEND_UNAVAILABLE} when the backend is unavailable, or the
   *     network is on and cannot be kept off the host; the error of {@code failure} when the start
   *     fails
   */
  public Sandbox start(
      SandboxSpec spec, BackendStatus status, @Nullable Launcher launcher, Jail jail) {
    if (!status.available() || launcher == null) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          backend + " backend is unavailable: " + status.reason());
    }
    Attempt attempt = new Attempt(spec, launcher.setpriv());
    Path slirp = slirp4netns;
    if (attempt.networkOn() && (slirp == null || !firewall.available())) {
      throw new BoxException(
          BoxErrorCode.BACKEND_UNAVAILABLE,
          "network on is unavailable on this server: the sandbox could not be kept off the host"
              + " (egress: "
              + networkStatus()
              + ")");
    }
    MountOwnership.prepare(spec, workspaces, sandboxUid);
    CgroupDriver.SessionCgroup cgroup =
        cgroups.createSession(spec.sandboxName(), spec.memoryMb(), spec.pidsLimit(), spec.cpus());
    Process network = null;
    AgentLink link = null;
    try {
      if (agent != null) {
        Path dir = agents.resolve(AgentSockets.dirName(spec.instanceId(), spec.sandboxName()));
        link = AgentLink.listen(spec.sandboxName(), dir, ExecAgent.SOCKET_NAME, agentDeadlines);
        attempt.agentMounts = new AgentMounts(agent, dir);
      }
      long initPid = jail.start(attempt);
      Process process = attempt.process;
      if (process == null) {
        throw new IllegalStateException("the jail did not hand over its process");
      }
      if (attempt.networkOn() && slirp != null) {
        network = UserModeNetwork.start(slirp, initPid, readers);
      }
      AgentRoute route = null;
      if (link != null) {
        CgroupDriver.ProcessCgroup agentGroup = cgroup.createProcessGroup(0);
        AgentRoute.admitAgent(agentGroup, initPid);
        route = new AgentRoute(link, agentGroup, initPid);
      }
      NamespaceSandbox sandbox =
          new NamespaceSandbox(
              spec.sandboxName(),
              process,
              initPid,
              cgroup,
              launcher,
              network,
              route,
              new AtomicBoolean());
      if (link != null) {
        link.awaitAgent(AGENT_CONNECT_TIMEOUT, sandbox::destroy);
      }
      return sandbox;
    } catch (IOException | ExecutionException | TimeoutException | RuntimeException e) {
      if (link != null) {
        link.close();
      }
      abandon(attempt.process, network, cgroup);
      if (e instanceof BoxException box) {
        throw box;
      }
      throw failure.apply(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (link != null) {
        link.close();
      }
      abandon(attempt.process, network, cgroup);
      throw new BoxException(
          BoxErrorCode.RUNTIME_UNAVAILABLE, "interrupted while starting a sandbox");
    }
  }

  /** Stops the threads and closes the cgroup driver. */
  public void close() {
    spawner.shutdownNow();
    readers.shutdownNow();
    agentDeadlines.timers().shutdownNow();
    cgroups.close();
  }

  private void abandon(
      @Nullable Process process, @Nullable Process network, CgroupDriver.SessionCgroup cgroup) {
    if (network != null) {
      UserModeNetwork.stop(network);
    }
    if (process != null) {
      // The jail and what it forked: its sandbox, or a clone that waits for a release.
      ParentDeath.killTree(process.toHandle());
    }
    cgroup.destroy();
  }
}
