package dev.box.backend.bwrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxMount;
import dev.box.sandbox.IdmappedMountSuite;
import dev.box.sandbox.IdmappedMounts;
import dev.box.sandbox.PooledBackendSuite;
import dev.box.sandbox.PooledBackendSuite.PooledBackend;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@linkplain IdmappedMountSuite idmapped mount suite} on bubblewrap, and what a server that
 * did not close leaves: the next instance detaches its staged mounts.
 */
class IdmappedMountTest extends IdmappedMountSuite {
  static List<PooledBackend> pooledBackends() {
    return SandboxPoolTest.pooledBackends();
  }

  @Test
  void theNextInstance_detachesTheStagedMountsOfOneThatDidNotClose() throws Exception {
    PooledBackend bwrap = pooledBackends().get(0);
    Path shared = folder("shared", 0, "rwxr-xr-x");
    BwrapBackend crashed = SandboxPoolTest.backend(dataDir, PooledBackendSuite.INSTANCE, 0);
    assumeThat(crashed.status().available()).as(crashed.status().reason()).isTrue();
    assertThat(crashed.status().enforced()).containsEntry(IdmappedMounts.HEALTH_KEY, "true");
    Sandbox left = crashed.start(spec("left", new SandboxMount(shared, "/data", false)));
    try (BwrapBackend next = SandboxPoolTest.backend(dataDir, "next", 0)) {
      assertThat(stagedMounts(bwrap)).hasSize(1);
      next.removeOrphans();
      assertThat(stagedMounts(bwrap)).isEmpty();
      assertThat(dataDir.resolve("bwrap-idmapped").resolve(PooledBackendSuite.INSTANCE))
          .doesNotExist();
      assertThat(shared.resolve("given")).as("the folder itself is untouched").exists();
    } finally {
      left.destroy();
      crashed.close();
    }
  }
}
