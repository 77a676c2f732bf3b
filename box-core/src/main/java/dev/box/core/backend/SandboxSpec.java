package dev.box.core.backend;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a backend needs to start one session's sandbox; every host path in it has passed the policy.
 *
 * @param sessionId the session's id, as the user named it
 * @param sandboxName a name unique to this server instance and session, safe for file and cgroup
 *     names ({@code <instance>_<normalised id>-<hash>})
 * @param instanceId the id of the running server instance, which tags everything it creates
 * @param image the image (container backends)
 * @param network the network mode
 * @param workspace the workspace mount, or null when the spec mounts none
 * @param extraMounts further mounts
 * @param readOnlyRootfs whether the root filesystem is read-only
 * @param cpus CPU quota in cores
 * @param memoryMb memory limit in MiB, swap included
 * @param pidsLimit process limit
 * @param egress the session's own egress rules, applied within the operator's policy when the
 *     network is on
 * @param persistent whether the session outlives its server: a backend whose sandboxes can outlive
 *     a crash of the server marks them, so that the next server can adopt them ({@link
 *     SandboxBackend#adopt})
 * @param root a copy of another sandbox's writable root, kept by this backend ({@link
 *     RootCopies#keep}), that this sandbox starts from instead of {@code image}; null to start from
 *     {@code image}. Only a backend with {@link SandboxBackend#roots} is ever given one.
 */
public record SandboxSpec(
    String sessionId,
    String sandboxName,
    String instanceId,
    String image,
    BoxNetworkMode network,
    @Nullable SandboxMount workspace,
    List<SandboxMount> extraMounts,
    boolean readOnlyRootfs,
    double cpus,
    int memoryMb,
    int pidsLimit,
    BoxEgress egress,
    boolean persistent,
    @Nullable String root) {

  /** Copies {@code extraMounts}. */
  public SandboxSpec {
    extraMounts = List.copyOf(extraMounts);
  }

  /** This spec with {@code workspace} and {@code extraMounts} in place of its own. */
  public SandboxSpec withMounts(@Nullable SandboxMount workspace, List<SandboxMount> extraMounts) {
    return new SandboxSpec(
        this.sessionId,
        this.sandboxName,
        this.instanceId,
        this.image,
        this.network,
        workspace,
        extraMounts,
        this.readOnlyRootfs,
        this.cpus,
        this.memoryMb,
        this.pidsLimit,
        this.egress,
        this.persistent,
        this.root);
  }

  /** This spec starting from the copied root {@code root} (null: from its image). */
  public SandboxSpec withRoot(@Nullable String root) {
    return new SandboxSpec(
        this.sessionId,
        this.sandboxName,
        this.instanceId,
        this.image,
        this.network,
        this.workspace,
        this.extraMounts,
        this.readOnlyRootfs,
        this.cpus,
        this.memoryMb,
        this.pidsLimit,
        this.egress,
        this.persistent,
        root);
  }
}
