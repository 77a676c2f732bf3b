package dev.box.core.session;

import dev.box.api.BoxBackendUnavailableException;
import dev.box.api.BoxCapabilities;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxRuntimeUnavailableException;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.api.time.Ticker;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.backend.SharedSessions;
import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts and stops the sandbox of one session: its unit of capacity, its private workspace and its
 * managed processes. Holds no lock; the caller orders work on one id ({@link SessionTable}).
 *
 * @param table where a start reserves a unit of capacity and a stop gives it back
 * @param specs turns a session's spec into a sandbox's, its mounts checked
 * @param workspaces the private workspaces, removed with a session that does not persist
 * @param processes the managed processes, stopped with their session
 * @param clock what a new session's {@code created_at} is read from
 * @param instanceId tags the sandboxes of sessions that do not persist
 * @param maxSessions the capacity in force, read at every start
 * @param shuttingDown whether the runtime shuts down, which discards a sandbox just started
 * @param persistent the records of persistent sessions, saved at a start, removed at a stop
 * @param ticker what the start duration reported to {@code listener} is read from
 * @param listener told of every sandbox start
 */
record SessionSandboxes(
    SessionTable table,
    SandboxSpecs specs,
    WorkspaceStore workspaces,
    ProcessManager processes,
    Clock clock,
    String instanceId,
    IntSupplier maxSessions,
    BooleanSupplier shuttingDown,
    PersistentSessions persistent,
    Ticker ticker,
    SessionListener listener) {
  private static final Logger log = LoggerFactory.getLogger(SessionSandboxes.class);

  /**
   * Starts the sandbox of the new session {@code spec} on {@code backend}, taking a unit of
   * capacity: its private workspace starts as a copy of the snapshot {@code from_snapshot} names,
   * if any, and its sandbox from the copy of a writable root that snapshot keeps, if any.
   *
   * @throws BoxException as {@link #start(BoxSpec, SandboxBackend, WorkspaceStore.Seed, String)},
   *     and when the snapshot keeps a root this backend cannot start from
   */
  Session create(BoxSpec spec, SandboxBackend backend) {
    return start(spec, backend, null, specs.snapshotRoot(spec, backend));
  }

  /**
   * Starts the sandbox of {@code spec} on {@code backend}, taking a unit of capacity; a new private
   * workspace starts as a copy of {@code seed} (a fork's source workspace) when it is not null,
   * else of the snapshot {@code from_snapshot} names, if any; the sandbox starts from the copied
   * writable root {@code root} when it is not null (a fork's), else from its image. A persistent
   * session is recorded before it is returned; one that cannot be recorded is not started.
   *
   * @throws BoxException when the backend is unavailable, a mount is refused, the capacity is
   *     reached, the snapshot does not exist, the runtime shuts down meanwhile, or the backend
   *     cannot start it
   */
  Session start(
      BoxSpec spec,
      SandboxBackend backend,
      WorkspaceStore.@Nullable Seed seed,
      @Nullable String root) {
    return start(spec, backend, clock.instant(), false, null, seed, root);
  }

  /**
   * Starts a recorded persistent session again with its creation time: its sandbox, when the
   * backend finds it still running ({@link SandboxBackend#adopt}), else a new one on its kept
   * workspace, from its image (a writable root does not outlive its sandbox); as {@link
   * #start(BoxSpec, SandboxBackend, WorkspaceStore.Seed, String)} otherwise. A session recorded
   * paused since {@code pausedAt} is paused again (an adopted sandbox that is frozen already stays
   * so).
   */
  Session restore(
      BoxSpec spec, SandboxBackend backend, Instant createdAt, @Nullable Instant pausedAt) {
    return start(spec, backend, createdAt, true, pausedAt, null, null);
  }

  private Session start(
      BoxSpec spec,
      SandboxBackend backend,
      Instant createdAt,
      boolean adopt,
      @Nullable Instant pausedAt,
      WorkspaceStore.@Nullable Seed seed,
      @Nullable String root) {
    BackendStatus status = backend.status();
    if (!status.available()) {
      throw new BoxBackendUnavailableException(
          status.name().equals(BackendStatus.NONE)
              ? status.reason()
              : "Box backend " + status.name() + " is unavailable: " + status.reason());
    }
    boolean namesHostPaths =
        (spec.hostPath() != null && spec.hostPathMode() != BoxHostMountMode.NONE)
            || !spec.extraMounts().isEmpty();
    if (namesHostPaths && !status.capabilities().contains(BoxCapabilities.HOST_PATHS)) {
      throw new BoxValidationException(
          "host_path and extra_mounts are not available on the "
              + status.name()
              + " backend: it has no host directories to mount");
    }
    HostPathPolicy hostPaths = specs.policy();
    List<SandboxMount> extra = specs.extraMounts(spec, hostPaths);
    table.reserve(maxSessions.getAsInt());
    long started = ticker.read();
    String name =
        SandboxNames.of(spec.persistent() ? SandboxNames.PERSISTENT : instanceId, spec.sessionId());
    Path privateWorkspace = null;
    try {
      SandboxSpecs.Workspace workspace = specs.workspace(spec, hostPaths, name, seed);
      privateWorkspace = workspace.privateDir();
      SandboxSpec sandboxSpec = specs.sandboxSpec(spec, workspace, extra, root);
      Sandbox adopted = adopt ? backend.adopt(sandboxSpec) : null;
      if (adopted != null) {
        log.info("adopted the running sandbox {} of session {}", adopted.id(), spec.sessionId());
      }
      Sandbox sandbox = adopted != null ? adopted : backend.start(sandboxSpec);
      if (shuttingDown.getAsBoolean()) {
        sandbox.destroy();
        throw new BoxRuntimeUnavailableException("Box runtime is shutting down");
      }
      SharedSessions shared = backend.sharedSessions();
      if (shared != null) {
        try {
          shared.record(spec, createdAt);
        } catch (RuntimeException e) {
          // Other servers may serve the same sandbox (they started the same session at once): let
          // go of it, never stop it; one that nobody records is removed when its lease runs out.
          sandbox.release();
          throw e;
        }
      }
      Instant paused = pausedAt != null ? pauseRestored(spec, sandbox, pausedAt) : null;
      if (spec.persistent()) {
        try {
          persistent.save(spec, createdAt, paused);
        } catch (IOException e) {
          sandbox.destroy();
          throw e;
        }
      }
      log.info("created session {} ({})", spec.sessionId(), sandbox.id());
      if (adopted == null) {
        listener.sessionStarted(
            backend.name(), sandbox.preStarted(), Duration.ofNanos(ticker.read() - started));
      }
      Session session =
          new Session(spec, new Placement(sandbox, backend.name(), privateWorkspace), createdAt);
      session.pausedSince(paused);
      return session;
    } catch (IOException e) {
      table.release();
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot create the session's workspace or record: " + e, e);
    } catch (RuntimeException e) {
      table.release();
      if (privateWorkspace != null && !spec.persistent()) {
        workspaces.remove(privateWorkspace);
      }
      throw e;
    }
  }

  /**
   * Pauses the restored sandbox of a session recorded paused since {@code pausedAt}; one that
   * cannot be paused now runs, and the log says why.
   *
   * @return {@code pausedAt}, or null when it runs
   */
  private static @Nullable Instant pauseRestored(BoxSpec spec, Sandbox sandbox, Instant pausedAt) {
    try {
      sandbox.pause();
      return pausedAt;
    } catch (RuntimeException e) {
      log.warn("session {} was paused, and runs now: {}", spec.sessionId(), e.toString());
      return null;
    }
  }

  /**
   * Stops {@code session}'s processes and sandbox and gives back its capacity; its private
   * workspace is removed when {@code removeWorkspace}. A failure is logged, never thrown.
   */
  void stop(Session session, boolean removeWorkspace) {
    end(session, Sandbox::destroy, removeWorkspace, false);
    log.info("stopped session {}", session.id());
  }

  /**
   * Lets go of {@code session} for another server to serve ({@link SharedSessions}): its managed
   * processes that can outlive this server are detached, for that server to reattach, the others
   * stop (their relays are this server's), its sandbox is {@linkplain Sandbox#release released},
   * its capacity given back. A failure is logged, never thrown.
   */
  void release(Session session) {
    end(session, Sandbox::release, false, true);
    log.info("handed over session {}", session.id());
  }

  private void end(
      Session session, Consumer<Sandbox> ending, boolean removeWorkspace, boolean handOver) {
    session.markClosing();
    try {
      if (session.pausedAt() != null) {
        // A frozen process cannot die, nor can a frozen exec agent end one.
        session.sandbox().resume();
        session.pausedSince(null);
      }
      if (handOver) {
        processes.letGoAll(session);
      } else {
        processes.stopAll(session);
      }
      ending.accept(session.sandbox());
      if (removeWorkspace) {
        session.sandbox().removeWorkspace();
      }
    } catch (RuntimeException e) {
      log.warn("ending session {} failed: {}", session.id(), e.toString());
    } finally {
      table.release();
      @Nullable Path workspace = session.privateWorkspace();
      if (removeWorkspace && workspace != null) {
        workspaces.remove(workspace);
      }
      if (removeWorkspace && session.persistent()) {
        persistent.remove(session.id());
      }
    }
  }
}
