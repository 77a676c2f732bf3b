package dev.box.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.box.api.BoxValidationException;
import dev.box.core.backend.SandboxBackend;
import dev.box.core.backend.SandboxMount;
import dev.box.sandbox.IdmappedMountSuite;
import dev.box.sandbox.PooledBackendSuite;
import dev.box.sandbox.PooledBackendSuite.PooledBackend;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@linkplain IdmappedMountSuite idmapped mount suite} on the container engines: the engine
 * binds the mount Box staged on the host, and the container's sandbox user is its owner. A
 * persistent session's container outlives the server, and so would need its staged mount after it:
 * such a folder stays refused, saying why.
 */
class IdmappedMountTest extends IdmappedMountSuite {
  static List<PooledBackend> pooledBackends() {
    return ContainerPoolTest.pooledBackends();
  }

  @Test
  void aPersistentSession_getsNoIdmappedMount_andTheRefusalSaysWhy() throws Exception {
    Path shared = folder("shared", 0, "rwxr-xr-x");
    try (SandboxBackend docker = pooledBackends().get(0).open().open(dataDir, 0)) {
      assumeThat(docker.status().available()).as(docker.status().reason()).isTrue();
      assertThatThrownBy(
              () ->
                  docker.start(
                      PooledBackendSuite.pooledSpec(
                          "p", new SandboxMount(shared, "/workspace", false), 511, true)))
          .isInstanceOf(BoxValidationException.class)
          .hasMessageContaining("is not writable")
          .hasMessageContaining("an idmapped mount would make it the owner, but a persistent");
      assertThat(stagedMounts(pooledBackends().get(0))).isEmpty();
    }
  }
}
