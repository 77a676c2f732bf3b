package dev.box.core.session;

import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxManagedProcessConflictException;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessNotFoundException;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxValidationException;
import dev.box.api.internal.ShellScript;
import dev.box.api.time.Ticker;
import dev.box.core.RuntimeConfig;
import dev.box.core.backend.ProcessSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.backend.SharedSessions;
import dev.box.core.process.ManagedProcess;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The managed processes of all sessions: start (replacing a running one with the same id), stop,
 * capacity, and the retention of exited records.
 *
 * <p>Start and stop hold the session's lock, so they never race with the session's deletion.
 */
public final class ProcessManager {
  private static final Logger log = LoggerFactory.getLogger(ProcessManager.class);

  /** The shell of a terminal, terminal-shell.sh beside this class. */
  private static final String TERMINAL_SHELL =
      ShellScript.load(ProcessManager.class, "terminal-shell.sh");

  private final SessionManager sessions;
  private volatile RuntimeConfig.ProcessLimits limits;
  private final Clock clock;
  private final Ticker ticker;
  private final AtomicInteger running = new AtomicInteger();
  private final ConcurrentLinkedDeque<ManagedProcess> completed = new ConcurrentLinkedDeque<>();

  ProcessManager(
      SessionManager sessions, RuntimeConfig.ProcessLimits limits, Clock clock, Ticker ticker) {
    this.sessions = sessions;
    this.limits = limits;
    this.clock = clock;
    this.ticker = ticker;
  }

  /** Replaces the limits; called by {@link SessionManager#applyLimits}. */
  void limits(RuntimeConfig.ProcessLimits replacement) {
    limits = replacement;
  }

  /**
   * Starts {@code spec} in session {@code sessionId}; a running process with the same id is stopped
   * first.
   *
   * @throws BoxSessionNotFoundException when the session does not exist or is being deleted
   * @throws BoxCapacityExceededException when {@code max_managed_processes} run already
   */
  public BoxManagedProcessInfo start(String sessionId, BoxManagedProcessSpec spec) {
    try (KeyedLocks.Held held = sessions.lock(sessionId)) {
      Session session = requireOpen(sessionId);
      ManagedProcess old = session.processes().get(spec.processId());
      if (old != null && old.isRunning()) {
        old.stop();
      }
      reserve();
      ManagedProcess process;
      try {
        process =
            ManagedProcess.start(
                sessionId,
                spec,
                session.sandbox(),
                limits.stdoutBufferBytes(),
                clock,
                ticker,
                p -> exited(session, p));
      } catch (RuntimeException e) {
        running.decrementAndGet();
        throw e;
      }
      session.processes().put(spec.processId(), process);
      session.touch(clock.instant());
      BoxManagedProcessInfo info = process.info();
      share(sessionId, process, info.startedAt());
      return info;
    }
  }

  /**
   * Spawns {@code spec} in session {@code sessionId} for a caller that relays its stdio itself (as
   * E2B's process service does). Until it exits it is the session's activity: the session is
   * touched at its start and at its exit, and never reaped idle meanwhile. When the session ends,
   * its tree is killed. It is not a managed process: no id, no buffer, no share of {@code
   * max_managed_processes}; the caller bounds how many it spawns, reads its streams, and
   * {@linkplain SandboxProcess#release releases} it once done with them. A spec with a {@link
   * ProcessSpec#terminal} runs on a terminal, which {@link SandboxProcess#resize} resizes.
   *
   * @throws BoxSessionNotFoundException when the session does not exist or is being deleted
   * @throws dev.box.api.BoxValidationException when the spec asks for a terminal and the session's
   *     backend gives none
   */
  public SandboxProcess spawn(String sessionId, ProcessSpec spec) {
    try (KeyedLocks.Held held = sessions.lock(sessionId)) {
      return spawnIn(requireOpen(sessionId), spec);
    }
  }

  /**
   * Opens a terminal of {@code size} in session {@code sessionId}: a login shell (bash when the
   * sandbox has it, else sh) in the session's workdir, spawned as {@link #spawn} spawns, so that it
   * is the session's activity until it exits and dies with the session.
   *
   * @throws BoxSessionNotFoundException when the session does not exist or is being deleted
   * @throws dev.box.api.BoxValidationException when the session's backend gives no terminal
   */
  public SandboxProcess openTerminal(String sessionId, ProcessSpec.Terminal size) {
    String workdir = sessions.require(sessionId).template().workdir();
    return spawn(
        sessionId,
        new ProcessSpec(new ProcessSpec.Shell(TERMINAL_SHELL), workdir, Map.of(), true, 0, size));
  }

  /**
   * Spawns, as {@link #spawn} does, the sandbox's {@linkplain Sandbox#portPipe pipe} to TCP {@code
   * port} on its loopback: its stdin and stdout are that connection's bytes, and it exits 1 when
   * nothing listens there. Until it exits it keeps the session from being reaped.
   *
   * @throws BoxSessionNotFoundException when the session does not exist or is being deleted
   * @throws BoxValidationException when the backend cannot reach a sandbox's ports
   */
  public SandboxProcess connectPort(String sessionId, int port) {
    try (KeyedLocks.Held held = sessions.lock(sessionId)) {
      Session session = requireOpen(sessionId);
      List<String> pipe = session.sandbox().portPipe(port);
      if (pipe == null) {
        throw new BoxValidationException(
            "the "
                + sessions.backendStatus().name()
                + " backend cannot reach a sandbox's ports (it runs no box-agent in its"
                + " sandboxes); /v1/health lists \"ports\" among the capabilities of those that do");
      }
      return spawnIn(session, new ProcessSpec(new ProcessSpec.Argv(pipe), "/", Map.of(), true));
    }
  }

  private SandboxProcess spawnIn(Session session, ProcessSpec spec) {
    SandboxProcess process = session.sandbox().spawn(spec);
    session.spawned().add(process);
    session.touch(clock.instant());
    process
        .onExit()
        .whenComplete(
            (code, failure) -> {
              session.spawned().remove(process);
              session.touch(clock.instant());
            });
    return process;
  }

  /**
   * Records a process that can outlive this server beside its session, where the backend shares its
   * sessions, so that another server reattaches to it when this one goes. A failure leaves it
   * unrecorded: it then ends with this server's relay of it, as elsewhere.
   */
  private void share(String sessionId, ManagedProcess process, Instant startedAt) {
    SharedSessions shared = sessions.sharedSessions();
    String handle = process.handle();
    if (shared == null || handle == null) {
      return;
    }
    try {
      shared.recordProcess(
          sessionId, SharedSessions.HeldProcess.of(process.spec(), handle, startedAt));
    } catch (RuntimeException e) {
      log.warn(
          "managed process {} of session {} is not recorded for other servers: {}",
          process.spec().processId(),
          sessionId,
          e.toString());
    }
  }

  /**
   * Reattaches to the held processes of session {@code sessionId} that no live server relays (the
   * one that did stopped or died), where the session is held here: each is relayed, listed and
   * stopped here from now on, and its record names this server. One that is gone from the sandbox
   * loses its record; one another server took first is left to it.
   */
  public void adopt(String sessionId, List<SharedSessions.HeldProcess> orphans) {
    for (SharedSessions.HeldProcess orphan : orphans) {
      String processId = orphan.spec().processId();
      try (KeyedLocks.Held held = sessions.lock(sessionId)) {
        Session session = sessions.find(sessionId);
        if (session == null || session.closing()) {
          return;
        }
        ManagedProcess current = session.processes().get(processId);
        if (current != null && current.isRunning()) {
          continue;
        }
        SandboxProcess process = session.sandbox().reattach(orphan.handle());
        if (process == null) {
          log.info("managed process {} of session {} has ended", processId, sessionId);
          forgetShared(sessionId, processId);
          continue;
        }
        running.incrementAndGet();
        ManagedProcess adopted =
            ManagedProcess.adopt(
                sessionId,
                orphan.spec(),
                process,
                orphan.startedAt(),
                limits.stdoutBufferBytes(),
                clock,
                ticker,
                p -> exited(session, p));
        session.processes().put(processId, adopted);
        share(sessionId, adopted, orphan.startedAt());
        log.info("took over managed process {} of session {}", processId, sessionId);
      } catch (BoxManagedProcessConflictException e) {
        log.debug("managed process {} of session {}: {}", processId, sessionId, e.getMessage());
      } catch (RuntimeException e) {
        log.warn(
            "could not take over managed process {} of session {}: {}",
            processId,
            sessionId,
            e.toString());
      }
    }
  }

  private void forgetShared(String sessionId, String processId) {
    SharedSessions shared = sessions.sharedSessions();
    if (shared == null) {
      return;
    }
    try {
      shared.forgetProcess(sessionId, processId);
    } catch (RuntimeException e) {
      log.warn(
          "the record of managed process {} of session {} stays: {}",
          processId,
          sessionId,
          e.toString());
    }
  }

  /** The process {@code processId} of session {@code sessionId}. */
  public BoxManagedProcessInfo get(String sessionId, String processId) {
    return require(sessionId, processId).info();
  }

  /** The processes of session {@code sessionId}, running and exited, oldest first. */
  public List<BoxManagedProcessInfo> list(String sessionId) {
    return sorted(sessions.require(sessionId));
  }

  private static List<BoxManagedProcessInfo> sorted(Session session) {
    return session.processes().values().stream()
        .map(ManagedProcess::info)
        .sorted(Comparator.comparing(BoxManagedProcessInfo::startedAt))
        .toList();
  }

  /**
   * The process {@code processId} of session {@code sessionId} if this server holds both, else
   * null. Unlike {@link #get}, it never adopts a session another server serves.
   */
  public @Nullable BoxManagedProcessInfo held(String sessionId, String processId) {
    Session session = sessions.find(sessionId);
    ManagedProcess process = session == null ? null : session.processes().get(processId);
    return process == null ? null : process.info();
  }

  /**
   * As {@link #held}, for a request another server forwarded.
   *
   * @throws BoxManagedProcessNotFoundException when this server does not hold it
   */
  public BoxManagedProcessInfo requireHeld(String sessionId, String processId) {
    BoxManagedProcessInfo info = held(sessionId, processId);
    if (info == null) {
      throw notFound(sessionId, processId);
    }
    return info;
  }

  /**
   * The processes of session {@code sessionId} this server holds, as {@link #list} orders them:
   * none when it does not hold the session, which it never adopts.
   */
  public List<BoxManagedProcessInfo> listHeld(String sessionId) {
    Session session = sessions.find(sessionId);
    return session == null ? List.of() : sorted(session);
  }

  /** Stops the process and everything it started, and forgets it. */
  public void stop(String sessionId, String processId) {
    ManagedProcess process;
    try (KeyedLocks.Held held = sessions.lock(sessionId)) {
      Session session = sessions.require(sessionId);
      process = session.processes().remove(processId);
      if (process == null) {
        throw notFound(sessionId, processId);
      }
      // A frozen process cannot die.
      sessions.resumeIfPaused(session);
      process.stop();
      session.touch(clock.instant());
    }
  }

  /**
   * The process a relay attaches to, reading stdout from {@code from} (null: where the last
   * delivery ended). An exited process can still be attached to while stdout remains to be read
   * from that offset, so a client can replay what it lost and learn the exit code.
   *
   * @throws BoxManagedProcessConflictException when it has exited and nothing is left to read
   */
  public ManagedProcess attachable(String sessionId, String processId, @Nullable Long from) {
    ManagedProcess process = require(sessionId, processId);
    sessions.resumeIfPaused(sessions.require(sessionId));
    long start = from != null ? from : process.stdout().delivered();
    if (!process.isRunning() && process.stdout().isEndOfStream(start)) {
      throw new BoxManagedProcessConflictException(
          "managed process " + processId + " in session " + sessionId + " is not running");
    }
    return process;
  }

  /** Records that the session of {@code process} was used now (every relay message). */
  public void touch(ManagedProcess process) {
    Session session = sessions.find(process.sessionId());
    if (session != null) {
      session.touch(clock.instant());
    }
  }

  /** How many managed processes run, all sessions together. */
  public int running() {
    return running.get();
  }

  /** Drops exited records older than the retention, and the oldest beyond the maximum. */
  public void reapCompleted() {
    Instant cutoff = clock.instant().minus(limits.completedRetention());
    List<ManagedProcess> expired = new ArrayList<>();
    while (true) {
      ManagedProcess oldest = completed.peekFirst();
      if (oldest == null) {
        break;
      }
      Instant exitedAt = oldest.exitedAt();
      boolean tooOld = exitedAt != null && !exitedAt.isAfter(cutoff);
      if (!tooOld && completed.size() <= limits.maxCompleted()) {
        break;
      }
      if (completed.remove(oldest)) {
        expired.add(oldest);
      }
    }
    for (ManagedProcess process : expired) {
      Session session = sessions.find(process.sessionId());
      if (session != null) {
        session.processes().remove(process.spec().processId(), process);
      }
    }
  }

  /**
   * Stops every process of {@code session}, and kills the trees of those {@linkplain #spawn
   * spawned} for a caller; called while it is being deleted.
   */
  void stopAll(Session session) {
    endAll(session, false);
  }

  /**
   * Lets go of every process of {@code session}, which another server will serve: those that can
   * outlive this server are {@linkplain ManagedProcess#detach detached}, for that server to
   * reattach; the others stop.
   */
  void letGoAll(Session session) {
    endAll(session, true);
  }

  private void endAll(Session session, boolean detach) {
    List<Thread> stoppers = new ArrayList<>();
    // A spawned process ends with this server's relay of it, handed over or not.
    for (SandboxProcess process : session.spawned()) {
      stoppers.add(Thread.ofVirtual().start(process::killTree));
    }
    for (ManagedProcess process : session.processes().values()) {
      if (detach && process.isRunning() && process.handle() != null) {
        process.detach();
        running.decrementAndGet();
      } else if (process.isRunning()) {
        stoppers.add(Thread.ofVirtual().start(process::stop));
      }
    }
    for (Thread stopper : stoppers) {
      try {
        stopper.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    session.processes().values().forEach(completed::remove);
    session.processes().clear();
    session.spawned().clear();
  }

  private void exited(Session session, ManagedProcess process) {
    running.decrementAndGet();
    if (process.handle() != null) {
      forgetShared(session.id(), process.spec().processId());
    }
    session.touch(clock.instant());
    completed.addLast(process);
    reapCompleted();
  }

  private void reserve() {
    int max = limits.maxRunning();
    while (true) {
      int current = running.get();
      if (current >= max) {
        throw new BoxCapacityExceededException(
            "Box managed process capacity reached (" + max + ")");
      }
      if (running.compareAndSet(current, current + 1)) {
        return;
      }
    }
  }

  /** The session {@code sessionId}, resumed when it was paused: something is to run in it. */
  private Session requireOpen(String sessionId) {
    Session session = sessions.require(sessionId);
    if (session.closing()) {
      throw new BoxSessionNotFoundException("session " + sessionId + " is being deleted");
    }
    sessions.resumeIfPaused(session);
    return session;
  }

  private ManagedProcess require(String sessionId, String processId) {
    ManagedProcess process = sessions.require(sessionId).processes().get(processId);
    if (process == null) {
      throw notFound(sessionId, processId);
    }
    return process;
  }

  private static BoxManagedProcessNotFoundException notFound(String sessionId, String processId) {
    return new BoxManagedProcessNotFoundException(
        "session " + sessionId + " has no managed process with process_id=" + processId);
  }
}
