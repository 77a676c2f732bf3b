package dev.box.core.session;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Turns a session's {@link BoxSpec} into the {@link SandboxSpec} a backend starts: every mount path
 * checked, every host directory through the host-path policy, and a private workspace for a session
 * that mounts no host directory.
 *
 * <p>The policy is replaced while running ({@link #policy(HostPathPolicy)}); a spec is checked
 * against the policy of the moment it was first read, so one session never sees two policies.
 */
final class SandboxSpecs {
  private final String instanceId;
  private final WorkspaceStore workspaces;
  private final SnapshotStore snapshots;
  private volatile HostPathPolicy policy;

  SandboxSpecs(
      String instanceId,
      WorkspaceStore workspaces,
      SnapshotStore snapshots,
      HostPathPolicy policy) {
    this.instanceId = instanceId;
    this.workspaces = workspaces;
    this.snapshots = snapshots;
    this.policy = policy;
  }

  /** The host-path policy in force for new sessions. */
  HostPathPolicy policy() {
    return policy;
  }

  /** Replaces the host-path policy for sessions created from now on. */
  void policy(HostPathPolicy next) {
    policy = next;
  }

  /**
   * The extra mounts of {@code spec}, checked; mounts of mode {@code none} are left out.
   *
   * @throws BoxValidationException when a mount path or a host directory is refused
   */
  List<SandboxMount> extraMounts(BoxSpec spec, HostPathPolicy hostPaths) {
    List<SandboxMount> extra = new ArrayList<>();
    for (BoxMountSpec mount : spec.extraMounts()) {
      if (mount.mode() != BoxHostMountMode.NONE) {
        checkMountPath(mount.mountPath());
        HostPathPolicy.HostDirectory host =
            hostPaths.checkDirectory(mount.hostPath(), mount.mode() == BoxHostMountMode.RW);
        extra.add(
            new SandboxMount(
                host.path(),
                mount.mountPath(),
                mount.mode() == BoxHostMountMode.RO,
                host.boxOwned()));
      }
    }
    return extra;
  }

  /**
   * The workspace mount of {@code spec}, or none when its host path mode is {@code none}.
   *
   * @param privateName the name of the private workspace created when it names no host path
   * @param seed what a new private workspace starts as a copy of; null: the snapshot {@code
   *     from_snapshot} names, or else an empty one
   */
  Workspace workspace(
      BoxSpec spec,
      HostPathPolicy hostPaths,
      String privateName,
      WorkspaceStore.@Nullable Seed seed)
      throws IOException {
    if (spec.hostPathMode() == BoxHostMountMode.NONE) {
      return new Workspace(null, null);
    }
    checkMountPath(spec.mountPath());
    boolean readOnly = spec.hostPathMode() == BoxHostMountMode.RO;
    String hostPath = spec.hostPath();
    if (hostPath != null) {
      HostPathPolicy.HostDirectory host = hostPaths.checkDirectory(hostPath, !readOnly);
      return new Workspace(
          new SandboxMount(host.path(), spec.mountPath(), readOnly, host.boxOwned()), null);
    }
    String snapshot = spec.fromSnapshot();
    WorkspaceStore.Seed from =
        seed != null || snapshot == null ? seed : () -> snapshots.files(snapshot);
    Path privateWorkspace = workspaces.create(privateName, spec.workspaceQuotaMb(), from);
    return new Workspace(
        new SandboxMount(privateWorkspace, spec.mountPath(), readOnly, true), privateWorkspace);
  }

  /**
   * A session's workspace.
   *
   * @param mount what the sandbox mounts, or null for no workspace
   * @param privateDir the private workspace created for it, or null when it mounts a host path
   */
  record Workspace(@Nullable SandboxMount mount, @Nullable Path privateDir) {}

  /**
   * The copy of a writable root that a new session of {@code spec} starts from on {@code backend}:
   * the one the snapshot {@code from_snapshot} keeps, or null when it names none or keeps none.
   *
   * @throws dev.box.api.BoxException ({@code not_found}) when the snapshot does not exist
   * @throws BoxValidationException when the copy is another backend's, or a layer over another
   *     image than the spec's
   */
  @Nullable String snapshotRoot(BoxSpec spec, SandboxBackend backend) {
    String name = spec.fromSnapshot();
    SnapshotRoot root = name == null ? null : snapshots.root(name);
    if (name == null || root == null) {
      return null;
    }
    if (!root.backend().equals(backend.name()) || backend.roots() == null) {
      throw new BoxValidationException(
          "snapshot "
              + name
              + " holds the writable root of a "
              + root.backend()
              + " container, which the "
              + backend.name()
              + " backend cannot start from: create the session on "
              + root.backend()
              + ", or snapshot a session with read_only_rootfs, whose snapshot is its workspace"
              + " only");
    }
    if (!root.image().equals(spec.image())) {
      throw new BoxValidationException(
          "snapshot "
              + name
              + " holds a writable root over image "
              + root.image()
              + ": a session from it runs that image, not "
              + spec.image());
    }
    return root.copy();
  }

  /**
   * The sandbox of {@code spec} with the checked mounts, starting from the copied root {@code root}
   * (null: from its image).
   */
  SandboxSpec sandboxSpec(
      BoxSpec spec, Workspace workspace, List<SandboxMount> extra, @Nullable String root) {
    return new SandboxSpec(
        spec.sessionId(),
        SandboxNames.of(instanceId, spec.sessionId()),
        instanceId,
        spec.image(),
        spec.network(),
        workspace.mount(),
        extra,
        spec.readOnlyRootfs(),
        spec.cpus(),
        spec.memoryMb(),
        spec.pidsLimit(),
        spec.egress(),
        spec.persistent(),
        root);
  }

  private static void checkMountPath(String mountPath) {
    Path normal = Path.of(mountPath).normalize();
    if (normal.getNameCount() == 0 || !normal.toString().equals(mountPath.replaceAll("/+$", ""))) {
      throw new BoxValidationException(
          "mount_path " + mountPath + " must be a normalised directory below /");
    }
  }
}
