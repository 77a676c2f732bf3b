package dev.box.testkit;

import dev.box.backend.e2b.FakeE2b;
import java.io.IOException;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The conformance suite against the E2B backend, over {@link FakeE2b}: a fake, because no E2B
 * service is reachable from this machine. The fake speaks E2B's published control-plane and envd
 * protocols on loopback and runs the commands as real processes in a private directory per sandbox,
 * so everything Box does over the wire is real; what the fake does not model is listed in its
 * Javadoc. The backend's host-side objects are the fake's running sandboxes whose {@code
 * dev.box.data} metadata is the hash of one of the suite's state directories.
 */
class E2bConformanceTest extends FakeServiceConformance<FakeE2b> {
  @Override
  protected String backendName() {
    return "e2b";
  }

  @Override
  protected FakeE2b start(String apiKey) throws IOException {
    return FakeE2b.start(apiKey);
  }

  @Override
  protected Map<String, String> serverSettings() {
    FakeE2b running = fake();
    return Map.of(
        "e2b_api_key",
        secret,
        "e2b_api_url",
        running.apiUrl(),
        "e2b_envd_url",
        running.envdUrl(),
        "image",
        "box-testkit");
  }

  @Override
  protected Stream<String> machinesOf(FakeE2b fake, String label) {
    return fake.sandboxes("dev.box.data", label).stream().map(id -> "sandbox " + id);
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    fake().kill(backendSessionId);
  }
}
