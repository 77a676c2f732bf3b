package dev.box.backend.docker;

import dev.box.sandbox.IdmappedMountSuite;
import dev.box.sandbox.PooledBackendSuite.PooledBackend;
import java.util.List;

/**
 * The {@linkplain IdmappedMountSuite idmapped mount suite} on the container engines: the engine
 * binds the mount Box staged on the host, and the container's sandbox user is its owner.
 */
class IdmappedMountTest extends IdmappedMountSuite {
  static List<PooledBackend> pooledBackends() {
    return ContainerPoolTest.pooledBackends();
  }
}
