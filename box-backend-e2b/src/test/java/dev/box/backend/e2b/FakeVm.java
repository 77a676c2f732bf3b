package dev.box.backend.e2b;

import dev.box.fakemachine.FakeMachine;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * One sandbox of {@link FakeE2b}: a {@link FakeMachine} that stands in for the VM, with what E2B's
 * control plane knows of it.
 */
final class FakeVm extends FakeMachine {
  final String accessToken;
  final String template;
  final Map<String, String> metadata;
  volatile long expiresAtNanos;

  /** Makes the VM's disk in {@code root}; without {@code internet} its processes get no network. */
  FakeVm(
      String id,
      String accessToken,
      String template,
      Map<String, String> metadata,
      boolean internet,
      Path root)
      throws IOException {
    super(id, internet, root);
    this.accessToken = accessToken;
    this.template = template;
    this.metadata = Map.copyOf(metadata);
  }
}
