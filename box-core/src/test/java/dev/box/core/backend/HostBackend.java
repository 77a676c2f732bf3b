package dev.box.core.backend;

import java.util.Map;
import java.util.function.Supplier;

/**
 * A stand-in backend whose sandboxes are {@link HostSandbox}es: real processes on the host, no
 * isolation (see {@link HostSandbox} for why box-core's tests use it).
 *
 * @param sandboxes makes each session's sandbox
 */
public record HostBackend(Supplier<HostSandbox> sandboxes) implements SandboxBackend {

  @Override
  public String name() {
    return "host";
  }

  @Override
  public BackendStatus status() {
    return new BackendStatus("host", true, "the host itself", Map.of());
  }

  @Override
  public Sandbox start(SandboxSpec spec) {
    return sandboxes.get();
  }

  @Override
  public void removeOrphans() {}

  @Override
  public void close() {}
}
