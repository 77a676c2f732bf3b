package dev.box.backend.docker;

import dev.box.api.BoxException;
import dev.box.core.backend.SandboxSpec;
import dev.box.sandbox.engine.EngineClient;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * Creates a session's container: its body with the CPU quota as now configured, its writable root
 * bounded where the engine's storage bounds it. An engine that turns out to refuse the bound gets
 * the container without it, and health says so from then on ({@code reprobe}).
 *
 * @param client the engine's client
 * @param containers the engine's containers of this server
 * @param body the create body of a spec
 * @param cpuQuota whether containers get a CPU quota now
 * @param writableRoot how a writable root is bounded
 * @param reprobe probes the engine again, so that health tells what changed
 */
record ContainerCreator(
    EngineClient client,
    EngineContainers containers,
    ContainerCreateBody body,
    CpuQuota cpuQuota,
    WritableRoot writableRoot,
    Runnable reprobe) {

  /** Creates the container {@code name} of {@code spec} from {@code image}; returns its id. */
  String create(
      SandboxSpec spec, String name, String image, @Nullable Path agentDir, boolean pooled)
      throws IOException {
    Map<String, String> storage =
        spec.readOnlyRootfs() ? null : writableRoot.storageOpt(() -> imageBytes(image));
    try {
      return containers.create(
          name, body.of(spec, image, cpuQuota.enabled(), storage, agentDir, pooled), image);
    } catch (BoxException e) {
      if (storage == null || !writableRoot.refused(String.valueOf(e.getMessage()))) {
        throw e;
      }
      reprobe.run();
      return containers.create(
          name, body.of(spec, image, cpuQuota.enabled(), null, agentDir, pooled), image);
    }
  }

  /** The size of {@code image}, pulled first when the engine does not have it. */
  private long imageBytes(String image) throws IOException {
    OptionalLong bytes = WritableRoot.imageBytes(client, image);
    if (bytes.isEmpty()) {
      containers.puller().pull(image);
      bytes = WritableRoot.imageBytes(client, image);
    }
    return bytes.orElse(0);
  }
}
