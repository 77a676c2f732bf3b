package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * An extra host directory mounted into a sandbox.
 *
 * @param hostPath absolute path on the host (POSIX, or Windows for hosts that have such paths)
 * @param mountPath absolute path inside the sandbox
 * @param mode how it is mounted; {@code none} mounts are skipped by every backend
 */
public record BoxMountSpec(String hostPath, String mountPath, BoxHostMountMode mode) {

  /** Validates and normalises (strips) both paths. */
  public BoxMountSpec {
    hostPath = ModelRules.hostPath(hostPath);
    mountPath = ModelRules.sandboxPath("mount_path", mountPath);
  }

  @JsonCreator
  static BoxMountSpec fromJson(
      @JsonProperty("host_path") @Nullable String hostPath,
      @JsonProperty("mount_path") @Nullable String mountPath,
      @JsonProperty("mode") @Nullable String mode) {
    return new BoxMountSpec(
        ModelRules.required("host_path", hostPath),
        ModelRules.required("mount_path", mountPath),
        mode == null ? BoxHostMountMode.RW : WireEnums.parse(BoxHostMountMode.class, "mode", mode));
  }
}
