package dev.box.core.session;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxForkRequest;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSnapshot;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.backend.BackendStatus;
import dev.box.core.backend.RootCopies;
import dev.box.core.backend.SandboxBackend;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forks sessions and keeps snapshots of their private workspaces. Both copy the workspace under the
 * source session's lock, so that no delete or restart of the source interleaves, and so that the
 * copy is of one instant on the btrfs store (a subvolume snapshot is atomic); a full copy, where
 * there is no store, sees the writes the sandbox makes while it runs. Processes are never copied.
 *
 * <p>On a backend that keeps copies of its sandboxes' writable roots ({@link RootCopies}: the
 * container engines), both copy the source's writable root too, unless it is read-only: a fork's
 * sandbox starts from that copy, which is dropped once the fork runs (its sandbox holds what it
 * uses), and a snapshot keeps it until it is deleted.
 */
public final class SessionForks {
  private static final Logger log = LoggerFactory.getLogger(SessionForks.class);
  private final SessionTable table;
  private final SessionAcquirer acquirer;
  private final SnapshotStore snapshots;
  private final Clock clock;
  private final Function<String, Session> require;
  private final Supplier<SandboxBackend> backend;

  /**
   * @param table the live sessions and their locks
   * @param acquirer starts the fork as a new session
   * @param snapshots where snapshots are kept
   * @param clock what a snapshot's {@code created_at} is read from
   * @param require the live session of an id, or {@link BoxSessionNotFoundException}
   * @param backend the backend in use, which keeps the copies of writable roots
   */
  SessionForks(
      SessionTable table,
      SessionAcquirer acquirer,
      SnapshotStore snapshots,
      Clock clock,
      Function<String, Session> require,
      Supplier<SandboxBackend> backend) {
    this.table = table;
    this.acquirer = acquirer;
    this.snapshots = snapshots;
    this.clock = clock;
    this.require = require;
    this.backend = backend;
  }

  /**
   * Starts the new session {@code request.session_id} with the spec of {@code sourceId} (its image,
   * limits, network and mounts; persistent only when the request says so), a copy of its private
   * workspace, and a copy of its writable root where the backend keeps one; a host-path workspace
   * and extra mounts are mounted again, not copied. A paused source stays paused.
   *
   * @return the new session
   * @throws BoxSessionNotFoundException when the source does not exist
   * @throws dev.box.api.BoxSessionConflictException when the new id exists
   * @throws BoxValidationException when the new id is the source's or is not a valid id
   * @throws dev.box.api.BoxCapacityExceededException when {@code max_sessions} sessions exist
   */
  public BoxSessionInfo fork(String sourceId, BoxForkRequest request) {
    Session source = require.apply(sourceId);
    BoxSpec spec =
        source.template().toBuilder()
            .sessionId(request.sessionId())
            .persistent(request.persistent())
            .fromSnapshot(null)
            .cmd("")
            .build();
    if (spec.sessionId().equals(sourceId)) {
      throw new BoxValidationException("a session cannot be forked onto its own id " + sourceId);
    }
    try (KeyedLocks.Held held = table.lockSettled(sourceId)) {
      Session current = require.apply(sourceId);
      Path workspace = current.privateWorkspace();
      RootCopies roots = rootsOf(current);
      String root = roots == null ? null : roots.keep(current.sandbox());
      try {
        return acquirer.createNew(spec, workspace == null ? null : () -> workspace, root).info();
      } finally {
        if (roots != null && root != null) {
          roots.drop(root);
        }
      }
    }
  }

  /**
   * The copies of writable roots of the backend that runs {@code session}, or null when it keeps
   * none, or when the session's root is read-only (nothing is written to it).
   */
  private @Nullable RootCopies rootsOf(Session session) {
    SandboxBackend current = backend.get();
    if (session.template().readOnlyRootfs() || !current.name().equals(session.backend())) {
      return null;
    }
    return current.roots();
  }

  /**
   * Keeps an immutable copy of the private workspace of {@code sessionId} as the snapshot {@code
   * name}, with a copy of its writable root where the backend keeps one.
   *
   * @throws BoxSessionNotFoundException when the session does not exist
   * @throws BoxValidationException when the name is not valid, or the session has no private
   *     workspace (its workspace is a host path, or none)
   * @throws dev.box.api.BoxSessionConflictException when a snapshot of that name exists
   * @throws dev.box.api.BoxCapacityExceededException when {@code max_snapshots} exist
   */
  public BoxSnapshot snapshot(String sessionId, String name) {
    BoxSnapshot.checkName("name", name);
    var unused = require.apply(sessionId);
    try (KeyedLocks.Held held = table.lockSettled(sessionId)) {
      Session session = require.apply(sessionId);
      Path workspace = session.privateWorkspace();
      if (workspace == null) {
        throw new BoxValidationException(
            "session "
                + sessionId
                + " has no private workspace to snapshot: its workspace is a host_path or none");
      }
      RootCopies roots = rootsOf(session);
      return snapshots.take(
          name,
          sessionId,
          workspace,
          clock.instant(),
          roots == null ? null : keeper(roots, session));
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot take snapshot " + name + ": " + e, e);
    }
  }

  /** Keeps the copy of {@code session}'s writable root in {@code roots} for a snapshot. */
  private SnapshotStore.RootKeeper keeper(RootCopies roots, Session session) {
    return new SnapshotStore.RootKeeper() {
      @Override
      public SnapshotRoot keep() {
        return new SnapshotRoot(
            session.backend(), session.template().image(), roots.keep(session.sandbox()));
      }

      @Override
      public void drop(SnapshotRoot root) {
        roots.drop(root.copy());
      }
    };
  }

  /** Every snapshot, oldest first. */
  public List<BoxSnapshot> snapshots() {
    return snapshots.list();
  }

  /**
   * The snapshot {@code name}.
   *
   * @throws BoxException ({@code not_found}) when there is none
   */
  public BoxSnapshot snapshot(String name) {
    return snapshots.get(name);
  }

  /**
   * Deletes the snapshot {@code name} and the copy of a writable root it keeps; sessions started
   * from it keep their copies.
   *
   * @throws BoxException ({@code not_found}) when there is none
   */
  public void deleteSnapshot(String name) {
    SnapshotRoot root;
    try {
      root = snapshots.delete(name);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot delete snapshot " + name + ": " + e, e);
    }
    SandboxBackend current = backend.get();
    RootCopies roots = current.roots();
    if (root != null && roots != null && current.name().equals(root.backend())) {
      roots.drop(root.copy());
    } else if (root != null) {
      log.info(
          "the copy of snapshot {}'s writable root stays until the next start on {}",
          name,
          root.backend());
    }
  }

  /**
   * Removes the copies of writable roots the backend kept that no snapshot names (a crash between a
   * copy and its record); once at startup.
   */
  void removeOrphans() {
    SandboxBackend current = backend.get();
    RootCopies roots = current.roots();
    if (roots == null) {
      return;
    }
    Set<String> kept = new HashSet<>();
    for (SnapshotRoot root : snapshots.roots()) {
      if (root.backend().equals(current.name())) {
        kept.add(root.copy());
      }
    }
    roots.removeOthers(kept);
  }

  /**
   * {@code status} with {@code enforced.fork_root}: what a fork or a snapshot copies beyond the
   * workspace on {@code backend}.
   */
  static BackendStatus reportRoots(BackendStatus status, SandboxBackend backend) {
    RootCopies roots = backend.roots();
    Map<String, String> enforced = new TreeMap<>(status.enforced());
    enforced.put(
        "fork_root",
        roots != null
            ? roots.describe()
            : "none: the "
                + backend.name()
                + " backend keeps no copy of a sandbox's root, a fork or a snapshot copies the"
                + " workspace");
    return new BackendStatus(
        status.name(), status.available(), status.reason(), enforced, status.capabilities());
  }
}
