package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/sessions/{id}/snapshots}.
 *
 * @param name the snapshot's name ({@link BoxSnapshot#checkName})
 */
public record BoxSnapshotRequest(String name) {

  /** Checks the name. */
  public BoxSnapshotRequest {
    BoxSnapshot.checkName("name", name);
  }

  @JsonCreator
  static BoxSnapshotRequest fromJson(@JsonProperty("name") @Nullable String name) {
    return new BoxSnapshotRequest(BoxSnapshot.checkName("name", name));
  }
}
