package dev.box.backend.docker;

import dev.box.core.agent.AgentLink;
import dev.box.core.agent.AgentSockets;
import dev.box.core.agent.LinkDeadlines;
import dev.box.guard.ExecAgent;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host side of the containers' exec agents: the socket each container's agent connects to, and
 * the container's cgroup the server moves each process into. A server that cannot see the engine's
 * cgroups (it runs in a container of its own) stops giving containers the agent, once, and their
 * processes start through the engine's exec API instead.
 */
final class ContainerAgents {
  private static final Logger log = LoggerFactory.getLogger(ContainerAgents.class);

  /** How long a container's exec agent may take to connect, and to answer each request. */
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(15);

  private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(5);

  private final String engine;
  private final @Nullable Path binary;
  private final Path root;
  private final String instanceId;

  private final LinkDeadlines deadlines;

  /** Why containers no longer get the exec agent, or null while they do. */
  private volatile @Nullable String unusable;

  /**
   * @param binary the installed agent, or null when containers never get one
   * @param dataDir the server's data directory, whose agents' socket directories these are
   * @param deadlineThread the engine client's deadline thread, which closes with the backend
   */
  ContainerAgents(
      String engine,
      @Nullable Path binary,
      Path dataDir,
      String instanceId,
      ScheduledExecutorService deadlineThread) {
    this.engine = engine;
    this.binary = binary;
    this.root = AgentSockets.root(dataDir);
    this.instanceId = instanceId;
    this.deadlines = new LinkDeadlines(REPLY_TIMEOUT, deadlineThread);
  }

  /**
   * Installs the exec agent in {@code dataDir}: null when it or the host's cgroups are unavailable
   * (logged), and then processes start through the engine.
   */
  static @Nullable Path install(String engine, Path dataDir) {
    if (!ContainerCgroup.hostSupported()) {
      log.warn("{} backend: processes start through the engine: no cgroup tree", engine);
      return null;
    }
    ExecAgent installed = ExecAgent.install(dataDir);
    if (!installed.available()) {
      log.warn("{} backend: processes start through the engine: {}", engine, installed.reason());
    }
    return installed.binary();
  }

  /** Whether containers get the agent (now), and so processes can have terminals. */
  boolean usable() {
    return binary != null && unusable == null;
  }

  /** The installed agent, mounted into containers, or null. */
  @Nullable Path binary() {
    return binary;
  }

  /** The socket directory of container {@code name}'s agent. */
  Path dirOf(String name) {
    return root.resolve(AgentSockets.dirName(instanceId, name));
  }

  /**
   * The link the agent of the new container {@code name} will connect to, or null when containers
   * do not get the agent (now).
   */
  @Nullable AgentLink listen(String name) throws IOException {
    if (binary == null || unusable != null) {
      return null;
    }
    return AgentLink.listen(name, dirOf(name), ExecAgent.SOCKET_NAME, deadlines);
  }

  /**
   * Waits for the agent of {@code sandbox}'s container to connect to {@code link}, then starts the
   * container's processes through it; a link that breaks later removes the container. Where this
   * server cannot see the container's cgroup the link is closed and processes start through the
   * engine.
   */
  void attach(ContainerSandbox sandbox, AgentLink link) throws IOException {
    ContainerCgroup cgroup = cgroupOf(sandbox.initPid());
    if (cgroup == null) {
      link.close();
      return;
    }
    link.awaitAgent(CONNECT_TIMEOUT, sandbox::destroy);
    sandbox.useAgent(new ContainerAgent(link, cgroup, sandbox::running));
  }

  /**
   * Connects again to the agent of an adopted container, whose holder starts it again within a
   * second of the crashed server's; when it does not, its processes start through the engine.
   *
   * @param agentDir the socket directory the container was created with, or null for none
   */
  void reattach(ContainerSandbox sandbox, @Nullable Path agentDir) {
    if (binary == null || agentDir == null || !root.equals(agentDir.getParent())) {
      return;
    }
    AgentLink link = null;
    try {
      link = AgentLink.listen(sandbox.id(), agentDir, ExecAgent.SOCKET_NAME, deadlines);
      attach(sandbox, link);
    } catch (IOException e) {
      if (link != null) {
        link.close();
      }
      log.warn(
          "{}: the agent of adopted container {} did not connect ({}); its processes start"
              + " through the engine",
          engine,
          sandbox.id(),
          e.getMessage());
    }
  }

  /**
   * Removes the agent socket directories of earlier instances, but those of containers the engine
   * still has ({@code kept}): an adopted container's agent connects to its own again.
   */
  void removeStale(Set<Path> kept) {
    String mine = AgentSockets.instancePrefix(instanceId);
    AgentLink.removeStale(root, dir -> dir.startsWith(mine) || kept.contains(root.resolve(dir)));
  }

  /**
   * The cgroup of the container whose init is {@code initPid} as this server sees it, or null when
   * it cannot (the server runs in a container of its own, with its own view of /sys/fs/cgroup):
   * then no container of this backend uses the agent from now on, and the log says why, once.
   */
  private @Nullable ContainerCgroup cgroupOf(long initPid) {
    try {
      return ContainerCgroup.of(initPid);
    } catch (IOException e) {
      unusable = e.getMessage();
      log.warn(
          "{} backend: processes start through the engine, not the exec agent: {}",
          engine,
          e.getMessage());
      return null;
    }
  }
}
