package dev.box.core.session;

import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxForkRequest;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxSnapshot;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.function.Function;

/**
 * Forks sessions and keeps snapshots of their private workspaces. Both copy the workspace under the
 * source session's lock, so that no delete or restart of the source interleaves, and so that the
 * copy is of one instant on the btrfs store (a subvolume snapshot is atomic); a full copy, where
 * there is no store, sees the writes the sandbox makes while it runs. Processes are never copied.
 */
public final class SessionForks {
  private final SessionTable table;
  private final SessionAcquirer acquirer;
  private final SnapshotStore snapshots;
  private final Clock clock;
  private final Function<String, Session> require;

  /**
   * @param table the live sessions and their locks
   * @param acquirer starts the fork as a new session
   * @param snapshots where snapshots are kept
   * @param clock what a snapshot's {@code created_at} is read from
   * @param require the live session of an id, or {@link BoxSessionNotFoundException}
   */
  SessionForks(
      SessionTable table,
      SessionAcquirer acquirer,
      SnapshotStore snapshots,
      Clock clock,
      Function<String, Session> require) {
    this.table = table;
    this.acquirer = acquirer;
    this.snapshots = snapshots;
    this.clock = clock;
    this.require = require;
  }

  /**
   * Starts the new session {@code request.session_id} with the spec of {@code sourceId} (its image,
   * limits, network and mounts; persistent only when the request says so) and a copy of its private
   * workspace; a host-path workspace and extra mounts are mounted again, not copied. A paused
   * source stays paused.
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
      return acquirer.createNew(spec, workspace == null ? null : () -> workspace).info();
    }
  }

  /**
   * Keeps an immutable copy of the private workspace of {@code sessionId} as the snapshot {@code
   * name}.
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
      Path workspace = require.apply(sessionId).privateWorkspace();
      if (workspace == null) {
        throw new BoxValidationException(
            "session "
                + sessionId
                + " has no private workspace to snapshot: its workspace is a host_path or none");
      }
      return snapshots.take(name, sessionId, workspace, clock.instant());
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot take snapshot " + name + ": " + e, e);
    }
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
   * Deletes the snapshot {@code name}; sessions started from it keep their copies.
   *
   * @throws BoxException ({@code not_found}) when there is none
   */
  public void deleteSnapshot(String name) {
    try {
      snapshots.delete(name);
    } catch (IOException e) {
      throw new BoxException(
          BoxErrorCode.INTERNAL_ERROR, "cannot delete snapshot " + name + ": " + e, e);
    }
  }
}
