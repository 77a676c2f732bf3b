package dev.box.core.session;

import dev.box.api.BoxBackendUnavailableException;
import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.exec.ExecOutcome;
import dev.box.core.exec.ExecRunner;
import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sessions of one runtime: create or reuse by id, exec, delete, idle reaping and shutdown.
 *
 * <p>Work on one session id is serialised by a per-id lock; different ids never wait for each
 * other, and no lock is held while a command runs, so execs in one session run concurrently.
 * Validation and the host-path policy run before any request reaches the backend.
 */
public final class SessionManager implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SessionManager.class);

  private volatile SandboxBackend backend;
  private volatile BackendChoice choice;
  private volatile BackendChoice.@Nullable Selector selector;

  /** Held for reading while a session is acquired, for writing while the backend is replaced. */
  private final ReentrantReadWriteLock backendLock = new ReentrantReadWriteLock();

  private volatile RuntimeConfig config;
  private final Clock clock;
  private final String instanceId;
  private final SandboxSpecs specs;
  private final WorkspaceStore workspaces;
  private final ExecRunner runner;
  private final ConcurrentHashMap<String, Session> sessions = new ConcurrentHashMap<>();
  private final KeyedLocks locks = new KeyedLocks();
  private final AtomicInteger occupied = new AtomicInteger();
  private final ProcessManager processes;
  private volatile boolean shuttingDown;

  /**
   * Creates the manager; call {@link #removeOrphans()} once before serving.
   *
   * @param backend the backend that runs the sandboxes
   * @param config the runtime's settings
   * @param clock the source of time for {@code last_used_at} and reaping
   * @param instanceId the id of this server instance, which tags what it creates
   */
  public SessionManager(
      SandboxBackend backend, RuntimeConfig config, Clock clock, String instanceId) {
    this(new BackendChoice(backend, backend.name(), "given", Map.of()), config, clock, instanceId);
  }

  /**
   * Creates the manager on a chosen backend; call {@link #removeOrphans()} once before serving.
   *
   * @param choice the backend that runs the sandboxes, and how it was chosen
   * @param config the runtime's settings
   * @param clock the source of time for {@code last_used_at} and reaping
   * @param instanceId the id of this server instance, which tags what it creates
   */
  public SessionManager(
      BackendChoice choice, RuntimeConfig config, Clock clock, String instanceId) {
    this.backend = choice.backend();
    this.choice = choice;
    this.config = config;
    this.clock = clock;
    this.instanceId = instanceId;
    try {
      Files.createDirectories(config.dataDir());
    } catch (IOException e) {
      throw new IllegalStateException("cannot create data dir " + config.dataDir() + ": " + e, e);
    }
    this.workspaces = new WorkspaceStore(config.dataDir());
    this.specs =
        new SandboxSpecs(
            instanceId,
            workspaces,
            new HostPathPolicy(config.dataDir(), config.allowedMountRoots()));
    this.runner = new ExecRunner(config.maxOutputBytes());
    this.processes = new ProcessManager(this, config.processes(), clock);
  }

  /** The managed processes of these sessions. */
  public ProcessManager processes() {
    return processes;
  }

  /** Removes what earlier instances of this data directory left behind. */
  public void removeOrphans() {
    backend.removeOrphans();
    try {
      workspaces.removeOrphans(instanceId);
    } catch (IOException e) {
      log.warn("could not list orphaned workspaces: {}", e.toString());
    }
  }

  /** The outcome of {@link #createOrReuse}: the session and whether it was created just now. */
  public record Acquired(BoxSessionInfo info, boolean created) {}

  /**
   * Returns the session {@code spec.session_id}, creating it when it does not exist.
   *
   * @throws BoxSessionConflictException when it exists with a different compared field
   * @throws BoxCapacityExceededException when {@code max_sessions} sessions exist
   */
  public Acquired createOrReuse(BoxSpec spec) {
    Use use = acquire(spec, false);
    return new Acquired(use.session().info(), use.created());
  }

  /** The session {@code id}; throws {@link BoxSessionNotFoundException} when it does not exist. */
  public BoxSessionInfo get(String id) {
    return require(id).info();
  }

  /** Every session, oldest first. */
  public List<BoxSessionInfo> list() {
    return sessions.values().stream()
        .map(Session::info)
        .sorted(Comparator.comparing(BoxSessionInfo::createdAt))
        .toList();
  }

  /** How many sessions exist. */
  public int size() {
    return sessions.size();
  }

  /** The backend's status. */
  public BackendStatus backendStatus() {
    return backend.status();
  }

  /** The backend in use and how it was chosen. */
  public BackendChoice backendChoice() {
    return choice;
  }

  /**
   * Lets {@link #switchBackend} replace the backend with what {@code selector} chooses; without one
   * (a backend the operator named) the backend never changes.
   */
  public void allowBackendSwitch(BackendChoice.Selector selector) {
    this.selector = selector;
  }

  /** What {@link #switchBackend} did. */
  public enum Switch {
    /** The backend is now the one named (it was already, or it was replaced). */
    DONE,
    /** The backend was chosen by the operator and is kept. */
    FIXED,
    /** Sessions exist: the backend changes only while there is none. */
    BUSY
  }

  /**
   * Replaces the backend with the one {@code name} selects, as LangBot's runtime re-selects on
   * {@code box_init}: only while no session exists, and never a backend the operator named. The new
   * backend removes its orphans; the old one is closed.
   */
  public Switch switchBackend(String name) {
    BackendChoice.Selector select = selector;
    if (select == null) {
      return Switch.FIXED;
    }
    backendLock.writeLock().lock();
    try {
      if (name.equals(choice.requested()) || name.equals(backend.name())) {
        return Switch.DONE;
      }
      if (!sessions.isEmpty() || occupied.get() > 0) {
        return Switch.BUSY;
      }
      // Closed first: no session runs on it, and a new backend of the same kind may reuse what
      // this one would remove on close (bubblewrap's cgroup base).
      backend.close();
      BackendChoice next = select.select(name);
      choice = next;
      backend = next.backend();
      backend.removeOrphans();
      log.info("backend is now {} ({}): box.backend={}", backend.name(), next.why(), name);
      return Switch.DONE;
    } finally {
      backendLock.writeLock().unlock();
    }
  }

  /** Applies the backend's own configuration section ({@link SandboxBackend#configure}). */
  public void configureBackend(Map<String, Object> section) {
    backend.configure(section);
  }

  /**
   * Replaces the session and managed-process capacities (and the retention of exited processes)
   * while running; what exists already is kept even when it exceeds a lower capacity.
   */
  public void applyLimits(int maxSessions, RuntimeConfig.ProcessLimits processLimits) {
    config = config.withMaxSessions(maxSessions).withProcesses(processLimits);
    processes.limits(processLimits);
  }

  /**
   * Replaces the allowed mount roots for sessions created from now on (LangBot's {@code
   * box.local.allowed_mount_roots}); the data-dir and blocked-path rules stay, and with no root
   * every host path is refused. Existing sessions keep their mounts.
   */
  public void applyAllowedMountRoots(List<Path> roots) {
    specs.policy(HostPathPolicy.restrictedTo(config.dataDir(), roots));
  }

  /** The host-path policy in force for new sessions. */
  public HostPathPolicy hostPathPolicy() {
    return specs.policy();
  }

  /** The runtime's settings. */
  public RuntimeConfig config() {
    return config;
  }

  /**
   * Stops the session {@code id} and everything running in it, and removes its private workspace.
   */
  public void delete(String id) {
    try (KeyedLocks.Held held = locks.lock(id)) {
      Session session = sessions.remove(id);
      if (session == null) {
        throw new BoxSessionNotFoundException("session " + id + " not found");
      }
      destroy(session, true);
    }
  }

  /**
   * Runs {@code spec.cmd} in the session {@code spec.session_id}, creating the session first when
   * it does not exist. A command that exits non-zero or times out is a normal result.
   */
  public BoxExecutionResult exec(BoxSpec spec) {
    if (spec.cmd().isEmpty()) {
      throw new BoxValidationException("cmd must not be empty");
    }
    Session session = acquire(spec, true).session();
    try {
      ProcessSpec process =
          new ProcessSpec(new ProcessSpec.Shell(spec.cmd()), spec.workdir(), spec.env(), false);
      ExecOutcome outcome =
          runner.run(session.sandbox(), process, Duration.ofSeconds(spec.timeoutSec()));
      return new BoxExecutionResult(
          session.id(),
          backend.name(),
          outcome.status(),
          outcome.exitCode(),
          outcome.stdout(),
          outcome.stderr(),
          outcome.durationMs(),
          outcome.stdoutDroppedBytes(),
          outcome.stderrDroppedBytes());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BoxRuntimeUnavailableException("exec was interrupted");
    } finally {
      session.execEnded();
      session.touch(clock.instant());
    }
  }

  /**
   * Deletes every non-persistent session idle for at least the session TTL with no exec running.
   *
   * @return how many sessions were reaped
   */
  public int reapIdle() {
    Duration ttl = config.sessionTtl();
    if (ttl.isZero()) {
      return 0;
    }
    int reaped = 0;
    for (Session candidate : List.copyOf(sessions.values())) {
      if (!isIdle(candidate, ttl)) {
        continue;
      }
      try (KeyedLocks.Held held = locks.lock(candidate.id())) {
        Session current = sessions.get(candidate.id());
        if (current != candidate || !isIdle(current, ttl)) {
          continue;
        }
        sessions.remove(current.id());
        log.info("reaping idle session {}", current.id());
        destroy(current, true);
        reaped++;
      }
    }
    return reaped;
  }

  private boolean isIdle(Session session, Duration ttl) {
    return !session.persistent()
        && session.activeExecs() == 0
        && !session.hasRunningProcess()
        && !session.lastUsedAt().plus(ttl).isAfter(clock.instant());
  }

  /**
   * Refuses new work and stops every session; private workspaces of persistent sessions are kept.
   */
  public void shutdown() {
    shuttingDown = true;
    List<Thread> stoppers = new ArrayList<>();
    for (String id : List.copyOf(sessions.keySet())) {
      stoppers.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    try (KeyedLocks.Held held = locks.lock(id)) {
                      Session session = sessions.remove(id);
                      if (session != null) {
                        destroy(session, !session.persistent());
                      }
                    }
                  }));
    }
    for (Thread stopper : stoppers) {
      try {
        stopper.join(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  @Override
  public void close() {
    shutdown();
  }

  KeyedLocks.Held lock(String id) {
    return locks.lock(id);
  }

  @Nullable Session find(String id) {
    return sessions.get(id);
  }

  Session require(String id) {
    Session session = sessions.get(id);
    if (session == null) {
      throw new BoxSessionNotFoundException("session " + id + " not found");
    }
    return session;
  }

  private record Use(Session session, boolean created) {}

  private Use acquire(BoxSpec spec, boolean forExec) {
    String id = spec.sessionId();
    backendLock.readLock().lock();
    try (KeyedLocks.Held held = locks.lock(id)) {
      checkRunning();
      Session existing = sessions.get(id);
      if (existing != null) {
        String conflict = existing.conflictWith(spec);
        if (conflict != null) {
          throw new BoxSessionConflictException(
              "Box session " + id + " already exists with " + conflict);
        }
        if (existing.mountsDifferFrom(spec)) {
          log.info("Box session {} extra_mounts changed, recreating", id);
          sessions.remove(id);
          destroy(existing, false);
        } else if (!existing.sandbox().isAlive()) {
          log.warn("Box session {} backend disappeared, recreating", id);
          sessions.remove(id);
          destroy(existing, false);
        } else {
          existing.touch(clock.instant());
          if (forExec) {
            existing.execStarted();
          }
          return new Use(existing, false);
        }
      }
      Session session = create(spec);
      if (forExec) {
        session.execStarted();
      }
      sessions.put(id, session);
      return new Use(session, true);
    } finally {
      backendLock.readLock().unlock();
    }
  }

  private void checkRunning() {
    if (shuttingDown) {
      throw new BoxRuntimeUnavailableException("Box runtime is shutting down");
    }
  }

  private Session create(BoxSpec spec) {
    BackendStatus status = backend.status();
    if (!status.available()) {
      throw new BoxBackendUnavailableException(
          status.name().equals(BackendStatus.NONE)
              ? status.reason()
              : "Box backend " + status.name() + " is unavailable: " + status.reason());
    }
    HostPathPolicy hostPaths = specs.policy();
    List<SandboxMount> extra = specs.extraMounts(spec, hostPaths);
    reserveSlot();
    String name = SandboxNames.of(spec.persistent() ? "persistent" : instanceId, spec.sessionId());
    Path privateWorkspace = null;
    try {
      SandboxSpecs.Workspace workspace = specs.workspace(spec, hostPaths, name);
      privateWorkspace = workspace.privateDir();
      Sandbox sandbox = backend.start(specs.sandboxSpec(spec, workspace, extra));
      if (shuttingDown) {
        sandbox.destroy();
        throw new BoxRuntimeUnavailableException("Box runtime is shutting down");
      }
      log.info("created session {} ({})", spec.sessionId(), sandbox.id());
      return new Session(spec, sandbox, backend.name(), privateWorkspace, clock.instant());
    } catch (IOException e) {
      occupied.decrementAndGet();
      throw new BoxException(
          dev.box.api.BoxErrorCode.INTERNAL_ERROR, "cannot create workspace: " + e, e);
    } catch (RuntimeException e) {
      occupied.decrementAndGet();
      if (privateWorkspace != null && !spec.persistent()) {
        workspaces.remove(privateWorkspace);
      }
      throw e;
    }
  }

  private void reserveSlot() {
    int max = config.maxSessions();
    while (true) {
      int current = occupied.get();
      if (current >= max) {
        throw new BoxCapacityExceededException("Box session capacity reached (" + max + ")");
      }
      if (occupied.compareAndSet(current, current + 1)) {
        return;
      }
    }
  }

  private void destroy(Session session, boolean removeWorkspace) {
    session.markClosing();
    try {
      processes.stopAll(session);
      session.sandbox().destroy();
    } catch (RuntimeException e) {
      log.warn("destroying session {} failed: {}", session.id(), e.toString());
    } finally {
      occupied.decrementAndGet();
      @Nullable Path workspace = session.privateWorkspace();
      if (removeWorkspace && workspace != null) {
        workspaces.remove(workspace);
      }
      log.info("stopped session {}", session.id());
    }
  }
}
