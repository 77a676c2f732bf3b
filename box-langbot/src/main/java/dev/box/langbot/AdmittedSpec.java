package dev.box.langbot;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.core.policy.HostPathPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The one session shape grant-enforced mode allows: whatever the request says, the session is the
 * Workspace's runtime-owned {@code global} one, network off, no extra mounts, the Workspace's own
 * directory at {@code /workspace}, the default image, persistent, and the policy's limits. A
 * request that asks for something else outright is refused, so that a caller never believes it got
 * what it asked for.
 */
final class AdmittedSpec {
  private AdmittedSpec() {}

  /**
   * The admitted form of {@code requested}.
   *
   * @param root the managed workspace root (see {@link ManagedWorkspace#root()})
   * @throws ActionError {@code BoxAdmissionError} with the reference's message when the request
   *     asks for a shape the mode does not allow
   */
  static BoxSpec normalize(
      BoxSpec requested,
      ActionContext context,
      AdmissionPolicy policy,
      Path root,
      Function<String, @Nullable Path> skillPackage) {
    if (requested.network() != BoxNetworkMode.OFF) {
      throw Admission.admissionError("Managed sandbox network access is disabled");
    }
    if (!requested.extraMounts().isEmpty()) {
      throw Admission.admissionError("Managed sandbox additional host mounts are disabled");
    }
    if (!requested.mountPath().equals(BoxSpec.DEFAULT_MOUNT_PATH)) {
      throw Admission.admissionError("Managed sandbox mount_path is runtime-owned");
    }
    String workdir = requested.workdir();
    if (!workdir.equals(BoxSpec.DEFAULT_MOUNT_PATH)
        && !workdir.startsWith(BoxSpec.DEFAULT_MOUNT_PATH + "/")) {
      throw Admission.admissionError("Managed sandbox workdir must stay under /workspace");
    }
    Path workspace = workspaceOf(context, root);
    String hostPath = requested.hostPath();
    if (hostPath != null && !HostPathPolicy.resolve(Path.of(hostPath)).equals(workspace)) {
      throw Admission.admissionError("Managed sandbox host_path is runtime-owned");
    }
    List<BoxMountSpec> skillMounts = new ArrayList<>();
    String skill = requested.skillName();
    if (skill != null) {
      // The runtime resolves the skill in the Workspace's own store and mounts it read-only.
      Path packageRoot = skillPackage.apply(skill);
      if (packageRoot == null) {
        throw Admission.admissionError("Managed sandbox skill is unavailable in this Workspace");
      }
      skillMounts.add(
          new BoxMountSpec(
              packageRoot.toString(),
              BoxSpec.DEFAULT_MOUNT_PATH + "/.skills/" + skill,
              BoxHostMountMode.RO));
    }
    return requested.toBuilder()
        .sessionId(Tenancy.physicalId(context, policy.logicalSessionId()))
        .network(BoxNetworkMode.OFF)
        .image(BoxSpec.DEFAULT_IMAGE)
        .hostPath(workspace.toString())
        .hostPathMode(BoxHostMountMode.RW)
        .mountPath(BoxSpec.DEFAULT_MOUNT_PATH)
        .extraMounts(skillMounts)
        .persistent(true)
        .timeoutSec(Math.min(requested.timeoutSec(), policy.maxTimeoutSec()))
        .limits(policy.limits())
        .build();
  }

  /** {@code <root>/tenants/<namespace>}, created, and checked not to escape through a link. */
  private static Path workspaceOf(ActionContext context, Path root) {
    Path tenants = root.resolve("tenants");
    try {
      Files.createDirectories(tenants);
      Path realTenants = tenants.toRealPath();
      if (!realTenants.startsWith(root)) {
        throw Admission.admissionError(
            "Managed sandbox tenant directory escapes the configured workspace");
      }
      Path workspace =
          realTenants.resolve(Tenancy.namespace(context.instanceUuid(), context.workspaceUuid()));
      Files.createDirectories(workspace);
      Path realWorkspace = workspace.toRealPath();
      if (!realWorkspace.startsWith(realTenants)) {
        throw Admission.admissionError(
            "Managed sandbox Workspace path escapes its tenant directory");
      }
      return realWorkspace;
    } catch (IOException e) {
      throw Admission.readinessError("Managed sandbox workspace path is not writable");
    }
  }
}
