package dev.box.api;

import java.util.List;

/**
 * The snapshots a server keeps, as {@code GET /v1/snapshots} answers: {@code {"snapshots": [...]}}.
 *
 * @param snapshots every snapshot, oldest first
 */
public record BoxSnapshotList(List<BoxSnapshot> snapshots) {

  /** Copies the list. */
  public BoxSnapshotList {
    snapshots = List.copyOf(snapshots);
  }
}
