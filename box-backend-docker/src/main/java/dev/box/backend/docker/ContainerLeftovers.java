package dev.box.backend.docker;

import dev.box.api.BoxBackendUnavailableException;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxSpec;
import java.io.IOException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * What earlier servers of the data directory left in the engine: orphan containers, which are
 * removed, and the containers of persistent sessions, which the next server adopts.
 *
 * @param sandboxes the sandbox of a running container taken over
 */
record ContainerLeftovers(
    String engine,
    EngineContainers containers,
    ContainerAgents agents,
    SandboxLease lease,
    Function<EngineContainers.Adopted, ContainerSandbox> sandboxes) {

  /**
   * Removes the containers earlier servers of this data directory left, and their agent sockets;
   * with {@code sparingPersistent}, those of persistent sessions stay for adoption.
   */
  void removeOrphans(boolean sparingPersistent) {
    containers.removeOrphans(sparingPersistent);
    if (!sparingPersistent) {
      agents.removeStale(containers.agentDirs());
    }
  }

  /**
   * Takes over the running container that a crashed predecessor left for the persistent session
   * {@code spec}: the container, its processes and its workspace mount are as they were, and the
   * lease this server beats keeps it running. Null when there is none.
   */
  @Nullable Sandbox adopt(SandboxSpec spec) {
    EngineContainers.Adopted found = containers.adopt(spec.sessionId());
    if (found == null) {
      return null;
    }
    startLease(lease, engine);
    ContainerSandbox sandbox = sandboxes.apply(found);
    agents.reattach(sandbox, found.agentDir());
    return sandbox;
  }

  /** Starts beating {@code lease}, which a container of this server needs to keep running. */
  static void startLease(SandboxLease lease, String engine) {
    try {
      lease.start();
    } catch (IOException e) {
      throw new BoxBackendUnavailableException(
          engine + ": cannot write the sandbox lease: " + e.getMessage());
    }
  }
}
