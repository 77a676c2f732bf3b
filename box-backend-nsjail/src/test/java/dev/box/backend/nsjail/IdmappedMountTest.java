package dev.box.backend.nsjail;

import dev.box.sandbox.IdmappedMountSuite;
import dev.box.sandbox.PooledBackendSuite.PooledBackend;
import java.util.List;

/** The {@linkplain IdmappedMountSuite idmapped mount suite} on nsjail. */
class IdmappedMountTest extends IdmappedMountSuite {
  static List<PooledBackend> pooledBackends() {
    return NsjailPoolTest.pooledBackends();
  }
}
