package dev.box.core.session;

import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxExecutionResult;
import dev.box.api.BoxSessionConflictException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSessionState;
import dev.box.api.BoxSpec;
import dev.box.api.time.Ticker;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.BackendChoice;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.Foreground;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SharedSessions;
import dev.box.core.exec.ExecListener;
import dev.box.core.exec.ExecRunner;
import dev.box.core.files.SandboxFiles;
import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sessions of one runtime: create or reuse by id, exec, delete, idle reaping and shutdown.
 *
 * <p>Work on one session id is serialised by a per-id lock; different ids never wait for each
 * other, and no lock is held while a command runs, so execs in one session run concurrently. No
 * lock is held while a backend starts a sandbox either (an image pull may take minutes): the id is
 * claimed, and a second request for it waits for that start, at most {@link #START_WAIT} ({@link
 * SessionTable}); a backend switch meanwhile answers {@link Switch#BUSY} ({@link BackendSlot}).
 * Validation and the host-path policy run before any request reaches the backend ({@link
 * SandboxSpecs}).
 */
public final class SessionManager implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SessionManager.class);

  /**
   * How long a request waits for another request's start of the same session: longer than a start
   * takes, an image pull included ({@code pull_timeout_sec}, 300 s by default).
   */
  static final Duration START_WAIT = Duration.ofMinutes(10);

  /** How long a request waits for a backend switch in progress (close, probe, orphan cleanup). */
  static final Duration SWITCH_WAIT = Duration.ofMinutes(2);

  private final BackendSlot slot;
  private volatile RuntimeConfig config;
  private final Clock clock;
  private final String instanceId;
  private final SandboxSpecs specs;
  private final WorkspaceStore workspaces;

  private final PersistentSessions persistent;
  private final ExecRunner runner;
  private final SessionExecutor executor;
  private final SessionTable table;
  private final ProcessManager processes;
  private final SessionSandboxes sandboxes;
  private final SessionReaper reaper;
  private final SessionAcquirer acquirer;
  private final SessionFiles files;
  private final SessionPauses pauses;
  private final SnapshotStore snapshots;
  private final SessionForks forks;
  private final Foreground foreground;
  private volatile boolean shuttingDown;

  /**
   * Creates the manager on a chosen backend, telling {@code listener} of every exec and sandbox
   * start; call {@link #removeOrphans()} once before serving.
   *
   * @param choice the backend that runs the sandboxes, and how it was chosen
   * @param config the runtime's settings
   * @param clock the source of time for {@code last_used_at} and reaping
   * @param ticker measures execs, starts and waits
   * @param pumps the platform threads that read the output of execs and file transfers ({@link
   *     ExecRunner#newPumpPool()}); the caller shuts them down after {@link #close()}
   * @param instanceId the id of this server instance, which tags what it creates
   * @param listener told of execs and sandbox starts (the server's metrics)
   * @param foreground counts the manager's creates and execs under way; the server's backend shares
   *     it, and its work that nobody waits for (a pool's refill, spare workspaces) yields to them
   */
  public SessionManager(
      BackendChoice choice,
      RuntimeConfig config,
      Clock clock,
      Ticker ticker,
      ExecutorService pumps,
      String instanceId,
      SessionListener listener,
      Foreground foreground) {
    this.foreground = foreground;
    this.slot = new BackendSlot(choice, SWITCH_WAIT);
    this.table = new SessionTable(START_WAIT, ticker);
    this.config = config;
    this.clock = clock;
    this.instanceId = instanceId;
    try {
      Files.createDirectories(config.dataDir());
    } catch (IOException e) {
      throw new IllegalStateException("cannot create data dir " + config.dataDir() + ": " + e, e);
    }
    BtrfsStore cow = new BtrfsStore(config.dataDir(), config.store().imageGib(), foreground);
    this.workspaces = new WorkspaceStore(config.dataDir(), cow);
    this.snapshots =
        new SnapshotStore(config.dataDir(), cow, () -> this.config.store().maxSnapshots());
    this.persistent = new PersistentSessions(config.dataDir());
    this.specs =
        new SandboxSpecs(
            instanceId,
            workspaces,
            snapshots,
            new HostPathPolicy(config.dataDir(), config.allowedMountRoots()));
    this.runner = new ExecRunner(config.maxOutputBytes(), ticker, pumps);
    this.processes = new ProcessManager(this, config.processes(), clock, ticker);
    this.sandboxes =
        new SessionSandboxes(
            table,
            specs,
            workspaces,
            processes,
            clock,
            instanceId,
            () -> this.config.maxSessions(),
            () -> shuttingDown,
            persistent,
            ticker,
            listener);
    this.reaper = new SessionReaper(table, sandboxes, clock);
    this.pauses = new SessionPauses(table, () -> slot.backend().status(), persistent, clock);
    this.acquirer = new SessionAcquirer(slot, table, sandboxes, clock, () -> shuttingDown, pauses);
    this.executor = new SessionExecutor(acquirer, runner, slot, clock, ticker, listener);
    this.forks = new SessionForks(table, acquirer, snapshots, clock, this::require, slot::backend);
    this.files =
        new SessionFiles(
            table,
            new SandboxFiles(config.files(), pumps, config.dataDir().resolve("spool")),
            clock,
            () -> shuttingDown,
            acquirer::adoptShared,
            pauses::resumeIfPaused);
  }

  /** The files of the sessions: read, write, list, delete, archive and extract in a sandbox. */
  public SessionFiles files() {
    return files;
  }

  /** Forks of the sessions, and the snapshots of their workspaces. */
  public SessionForks forks() {
    return forks;
  }

  /** The managed processes of these sessions. */
  public ProcessManager processes() {
    return processes;
  }

  /**
   * Removes what earlier instances of this data directory left behind, except the workspaces of
   * recorded persistent sessions and the running sandboxes the backend keeps for them to adopt
   * (removed by {@link #restorePersistent()} when none adopts them), and the copies of writable
   * roots that recorded snapshots keep.
   */
  public void removeOrphans() {
    slot.backend().removeOrphansSparingPersistent();
    try {
      workspaces.removeOrphans(instanceId, persistent::recordsWorkspace);
    } catch (IOException e) {
      log.warn("could not list orphaned workspaces: {}", e.toString());
    }
    snapshots.removeOrphans();
    forks.removeOrphans();
  }

  /**
   * Starts again every persistent session an earlier instance of this data directory recorded, in a
   * fresh sandbox on its kept workspace, with its spec and its creation time; call it once after
   * {@link #removeOrphans()}. A session that cannot start now stays recorded, and is logged.
   *
   * @return how many sessions were restored
   */
  public int restorePersistent() {
    int restored = 0;
    SharedSessions shared = slot.backend().sharedSessions();
    for (PersistentSessions.Entry entry : persistent.load()) {
      String id = entry.spec().sessionId();
      if (shared != null && !stillShared(shared, id)) {
        // Another server deleted it meanwhile: the shared record is the truth, never start it
        // again.
        persistent.remove(id);
        continue;
      }
      if (acquirer.restore(entry.spec(), entry.createdAt(), entry.pausedAt())) {
        restored++;
      }
    }
    // What an earlier instance left and no restore adopted.
    slot.backend().removeOrphans();
    return restored;
  }

  /** Whether {@code shared} still records session {@code id}; when that cannot be told, it does. */
  private static boolean stillShared(SharedSessions shared, String id) {
    try {
      return shared.find(id) != null;
    } catch (RuntimeException e) {
      return true;
    }
  }

  /** The outcome of {@link #createOrReuse}: the session and whether it was created just now. */
  public record Acquired(BoxSessionInfo info, boolean created) {}

  /**
   * Returns the session {@code spec.session_id}, creating it when it does not exist. While another
   * request starts the same session, this one waits for that start and reuses its sandbox.
   *
   * @throws BoxSessionConflictException when it exists with a different compared field
   * @throws BoxCapacityExceededException when {@code max_sessions} sessions exist
   * @throws dev.box.api.BoxRuntimeUnavailableException when another request's start of the same
   *     session is still running after {@link #START_WAIT}
   * @throws dev.box.api.BoxBackendUnavailableException when a backend switch is still running after
   *     {@link #SWITCH_WAIT}
   */
  public Acquired createOrReuse(BoxSpec spec) {
    try (Foreground.Work work = foreground.begin()) {
      SessionAcquirer.Use use = acquirer.acquire(spec, false);
      return new Acquired(use.session().info(), use.created());
    }
  }

  /** The session {@code id}; throws {@link BoxSessionNotFoundException} when it does not exist. */
  public BoxSessionInfo get(String id) {
    return require(id).info();
  }

  /**
   * Every session, oldest first: this server's, and those another server of a backend that shares
   * its sessions started.
   */
  public List<BoxSessionInfo> list() {
    Map<String, BoxSessionInfo> all = new HashMap<>();
    SharedSessions shared = slot.backend().sharedSessions();
    if (shared != null) {
      String backend = slot.backend().name();
      for (SharedSessions.Entry entry : shared.list()) {
        all.put(
            entry.spec().sessionId(),
            Session.info(
                entry.spec(),
                backend,
                entry.sandboxId(),
                entry.createdAt(),
                entry.lastUsedAt(),
                BoxSessionState.RUNNING));
      }
    }
    for (Session session : table.sessions()) {
      all.put(session.id(), session.info());
    }
    return all.values().stream().sorted(Comparator.comparing(BoxSessionInfo::createdAt)).toList();
  }

  /**
   * Freezes every process of the session {@code id}: they keep their memory and use no CPU until
   * {@link #resume} or the next use of the session; idempotent.
   *
   * @return the session, paused
   * @throws BoxSessionNotFoundException when it does not exist
   * @throws dev.box.api.BoxValidationException when the backend cannot pause
   */
  public BoxSessionInfo pause(String id) {
    Session session = require(id);
    pauses.pause(session);
    return session.info();
  }

  /**
   * Thaws the session {@code id}; idempotent.
   *
   * @return the session, running
   * @throws BoxSessionNotFoundException when it does not exist
   */
  public BoxSessionInfo resume(String id) {
    Session session = require(id);
    pauses.resume(session);
    return session.info();
  }

  /** Thaws {@code session} before a use of it; see {@link #resume}. */
  void resumeIfPaused(Session session) {
    pauses.resumeIfPaused(session);
  }

  /** How many sessions exist. */
  public int size() {
    return table.size();
  }

  /** The backend's status. */
  public BackendStatus backendStatus() {
    SandboxBackend backend = slot.backend();
    return SessionForks.reportRoots(workspaces.reportQuota(backend.status()), backend);
  }

  /** The backend in use and how it was chosen. */
  public BackendChoice backendChoice() {
    return slot.choice();
  }

  /**
   * Lets {@link #switchBackend} replace the backend with what {@code selector} chooses; without one
   * (a backend the operator named) the backend never changes.
   */
  public void allowBackendSwitch(BackendChoice.Selector selector) {
    slot.allowSwitch(selector);
  }

  /** What {@link #switchBackend} did. */
  public enum Switch {
    /** The backend is now the one named (it was already, or it was replaced). */
    DONE,
    /** The backend was chosen by the operator and is kept. */
    FIXED,
    /**
     * Sessions exist or are being started: the backend changes only while there is none, and never
     * under a start in progress.
     */
    BUSY
  }

  /**
   * Replaces the backend with the one {@code name} selects, as LangBot's runtime re-selects on
   * {@code box_init}: only while no session exists, and never a backend the operator named. The new
   * backend removes its orphans; the old one is closed. Never waits for a start in progress: it
   * answers {@link Switch#BUSY} then.
   */
  public Switch switchBackend(String name) {
    return slot.switchTo(name, table::inUse);
  }

  /** Applies the backend's own configuration section ({@link SandboxBackend#configure}). */
  public void configureBackend(Map<String, Object> section) {
    slot.backend().configure(section);
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
   * Restricts host paths of sessions created from now on to {@code roots}, as LangBot's {@code
   * box.local.allowed_mount_roots} does (no root: no host path); directories inside {@code
   * managedRoots} are the runtime's and are handed to the sandbox user when mounted read-write (see
   * {@link HostPathPolicy#restrictedTo(Path, List, List)}).
   */
  public void applyAllowedMountRoots(List<Path> roots, List<Path> managedRoots) {
    specs.policy(HostPathPolicy.restrictedTo(config.dataDir(), roots, managedRoots));
  }

  /** The host-path policy in force for new sessions. */
  public HostPathPolicy hostPathPolicy() {
    return specs.policy();
  }

  /** The runtime's settings. */
  public RuntimeConfig config() {
    return config;
  }

  /** The source of time of the sessions, which the server chose. */
  public Clock clock() {
    return clock;
  }

  /**
   * Stops the session {@code id} and everything running in it, and removes its private workspace; a
   * start of it in progress is waited for first.
   */
  public void delete(String id) {
    try (KeyedLocks.Held held = table.lockSettled(id)) {
      Session session = require(id);
      table.remove(id);
      sandboxes.stop(session, true);
    }
  }

  /**
   * Runs {@code spec.cmd} in the session {@code spec.session_id}, creating the session first when
   * it does not exist. A command that exits non-zero or times out is a normal result.
   */
  public BoxExecutionResult exec(BoxSpec spec) {
    return exec(spec, ExecListener.NONE);
  }

  /**
   * Runs {@code spec}'s command as {@link #exec(BoxSpec)} does, and has {@code output} hear its
   * output as the command writes it (up to {@code max_output_bytes} of each stream, then the notes
   * the result's stderr ends with). What fails before {@link ExecListener#started} was heard, fails
   * before the command began.
   */
  public BoxExecutionResult exec(BoxSpec spec, ExecListener output) {
    try (Foreground.Work work = foreground.begin()) {
      return executor.exec(spec, output);
    }
  }

  /**
   * Deletes every non-persistent session idle for at least the session TTL with no exec running,
   * and every non-persistent session paused for at least the paused-session TTL. A paused session
   * is never idle.
   *
   * @return how many sessions were reaped
   */
  public int reapIdle() {
    Duration ttl = config.sessionTtl();
    Duration pausedTtl = config.pausedSessionTtl();
    return (ttl.isZero() ? 0 : reaper.reapIdle(ttl))
        + (pausedTtl.isZero() ? 0 : reaper.reapPaused(pausedTtl));
  }

  /**
   * Refuses new work and stops every session, those being started included once their start ends;
   * private workspaces of persistent sessions and snapshots are kept (the workspace store is
   * unmounted). Where the backend shares its sessions, they are handed over while other servers
   * serve them, and persistent ones are kept running for the next server.
   */
  public void shutdown() {
    shuttingDown = true;
    SharedSessions shared = slot.backend().sharedSessions();
    if (shared != null && othersServe(shared)) {
      reaper.handOverAll(shared);
    } else {
      reaper.stopAll(shared != null);
    }
    workspaces.close();
  }

  /** Whether other servers serve {@code shared}; when that cannot be told, they are assumed to. */
  private static boolean othersServe(SharedSessions shared) {
    try {
      return shared.othersServe();
    } catch (RuntimeException e) {
      log.warn(
          "cannot tell whether other servers serve the sessions, handing them over: {}",
          e.toString());
      return true;
    }
  }

  /**
   * Where the backend keeps the sessions every server of the tenant serves, or null when it keeps
   * them for this server alone.
   */
  public @Nullable SharedSessions sharedSessions() {
    return slot.backend().sharedSessions();
  }

  /**
   * How often {@link #renewShared()} must run: the backend's lease renewal, or null when the
   * backend does not share its sessions.
   */
  public @Nullable Duration renewSharedEvery() {
    SharedSessions shared = slot.backend().sharedSessions();
    return shared == null ? null : shared.renewEvery();
  }

  /**
   * Renews this server's lease on the sessions it holds, when the backend shares its sessions: the
   * last use another server saw moves {@code last_used_at}, a session another server deleted is let
   * go, sessions a stopped server handed over are adopted, and so are the managed processes of held
   * sessions that no live server relays.
   */
  public void renewShared() {
    SharedSessions shared = slot.backend().sharedSessions();
    if (shared == null || shuttingDown) {
      return;
    }
    Map<String, Instant> held = new HashMap<>();
    for (Session session : table.sessions()) {
      held.put(session.id(), session.lastUsedAt());
    }
    SharedSessions.Renewal renewal = shared.renew(held);
    for (String id : held.keySet()) {
      Instant used = renewal.lastUsed().get(id);
      if (used == null) {
        forget(id);
      } else {
        Session session = table.get(id);
        if (session != null && used.isAfter(session.lastUsedAt())) {
          session.touch(used);
        }
      }
    }
    for (String id : renewal.handedOver()) {
      try {
        acquirer.adoptShared(id);
      } catch (RuntimeException e) {
        log.warn("could not take over session {}: {}", id, e.getMessage());
      }
    }
    renewal.orphans().forEach(processes::adopt);
  }

  /** Lets go of the session {@code id}, which another server deleted. */
  private void forget(String id) {
    try (KeyedLocks.Held held = table.lockSettled(id)) {
      Session session = table.get(id);
      if (session != null) {
        table.remove(id);
        log.info("session {} was deleted by another server", id);
        sandboxes.release(session);
        persistent.remove(id);
      }
    }
  }

  @Override
  public void close() {
    shutdown();
  }

  /**
   * What the session {@code id} uses now: its sandbox's CPU time and memory, as the backend
   * measures them, and its private workspace's disk. A paused session is measured as it is.
   *
   * @throws BoxSessionNotFoundException when it does not exist
   */
  public SessionUsage usage(String id) {
    return SessionUsage.measure(require(id), clock.instant());
  }

  /** Locks the session {@code id} once no start of it is in progress (bounded). */
  KeyedLocks.Held lock(String id) {
    return table.lockSettled(id);
  }

  @Nullable Session find(String id) {
    return table.get(id);
  }

  Session require(String id) {
    acquirer.adoptShared(id);
    Session session = table.get(id);
    if (session == null) {
      throw new BoxSessionNotFoundException("session " + id + " not found");
    }
    return session;
  }
}
