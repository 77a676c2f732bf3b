package dev.box.api;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A live session as the server reports it.
 *
 * @param sessionId the session's id
 * @param backendName the backend that runs it, for example {@code bwrap}
 * @param backendSessionId the backend's own name for the sandbox
 * @param image the image (metadata for bubblewrap)
 * @param network the network mode
 * @param hostPath the host directory mounted as the workspace, or null for a private one
 * @param hostPathMode how the workspace is mounted
 * @param mountPath where the workspace appears inside the sandbox
 * @param persistent whether the session is exempt from idle reaping
 * @param cpus the CPU quota in cores
 * @param memoryMb the memory limit in MiB
 * @param pidsLimit the process limit
 * @param readOnlyRootfs whether the root filesystem is read-only
 * @param workspaceQuotaMb the workspace quota in MiB (0 = none)
 * @param createdAt when the session was created (UTC)
 * @param lastUsedAt when the session was last used (UTC)
 * @param state whether its processes run or are frozen; {@code running} when a server too old to
 *     say leaves it out
 */
public record BoxSessionInfo(
    String sessionId,
    String backendName,
    String backendSessionId,
    String image,
    BoxNetworkMode network,
    @Nullable String hostPath,
    BoxHostMountMode hostPathMode,
    String mountPath,
    boolean persistent,
    double cpus,
    int memoryMb,
    int pidsLimit,
    boolean readOnlyRootfs,
    int workspaceQuotaMb,
    Instant createdAt,
    Instant lastUsedAt,
    BoxSessionState state) {

  /** Reads a missing state as {@link BoxSessionState#RUNNING}. */
  public BoxSessionInfo {
    if (state == null) {
      state = BoxSessionState.RUNNING;
    }
  }
}
