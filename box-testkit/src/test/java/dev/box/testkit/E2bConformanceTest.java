package dev.box.testkit;

import dev.box.api.BoxDataDir;
import dev.box.backend.e2b.FakeE2b;
import dev.box.core.Hashes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;

/**
 * The conformance suite against the E2B backend, over {@link FakeE2b}: a fake, because no E2B
 * service is reachable from this machine. The fake speaks E2B's published control-plane and envd
 * protocols on loopback and runs the commands as real processes in a private directory per sandbox,
 * so everything Box does over the wire is real; what the fake does not model is listed in its
 * Javadoc. The backend's host-side objects are the fake's running sandboxes whose {@code
 * dev.box.data} metadata is the hash of one of the suite's state directories.
 */
class E2bConformanceTest extends BackendConformanceSuite {
  private final String apiKey = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
  private @Nullable FakeE2b fake;

  @Override
  protected String backendName() {
    return "e2b";
  }

  @Override
  protected Map<String, String> serverSettings() {
    FakeE2b running = fake();
    return Map.of(
        "e2b_api_key",
        apiKey,
        "e2b_api_url",
        running.apiUrl(),
        "e2b_envd_url",
        running.envdUrl(),
        "image",
        "box-testkit");
  }

  private synchronized FakeE2b fake() {
    if (fake == null) {
      try {
        fake = FakeE2b.start(apiKey);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return fake;
  }

  @AfterAll
  void stopFake() throws IOException {
    if (fake != null) {
      fake.close();
    }
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    for (Path dataDir : dataDirs()) {
      String label = Hashes.shortSha256(BoxDataDir.stateDir(dataDir).toString());
      fake().sandboxes("dev.box.data", label).forEach(id -> found.add("sandbox " + id));
    }
    return found;
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    fake().kill(backendSessionId);
  }
}
