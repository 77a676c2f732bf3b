package dev.box.testkit;

import dev.box.api.BoxDataDir;
import dev.box.backend.boxlite.FakeBoxlite;
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
 * The conformance suite against the BoxLite backend, over {@link FakeBoxlite}: a fake, because
 * BoxLite needs KVM and libkrun, which this machine lacks. The fake speaks BoxLite's published REST
 * API and attach WebSocket on loopback and runs the executions as real processes in a private
 * directory per box, so everything Box does over the wire is real; what the fake does not model is
 * listed in its Javadoc. The backend's host-side objects are the fake's boxes whose name Box gave
 * for one of the suite's state directories. Boxes outlive their server, so a persistent session's
 * box is adopted after a crash.
 */
class BoxliteConformanceTest extends BackendConformanceSuite {
  private final String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
  private @Nullable FakeBoxlite fake;

  @Override
  protected String backendName() {
    return "boxlite";
  }

  @Override
  protected Map<String, String> serverSettings() {
    FakeBoxlite running = fake();
    return Map.of("boxlite_url", running.url(), "boxlite_token", token, "image", "box-testkit");
  }

  private synchronized FakeBoxlite fake() {
    if (fake == null) {
      try {
        fake = FakeBoxlite.start(token);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return fake;
  }

  @AfterAll
  void stopFake() {
    if (fake != null) {
      fake.close();
    }
  }

  @Override
  protected boolean adoptsAfterACrash() {
    return true;
  }

  @Override
  protected Set<String> leftovers() {
    Set<String> found = new TreeSet<>();
    for (Path dataDir : dataDirs()) {
      String label = Hashes.shortSha256(BoxDataDir.stateDir(dataDir).toString());
      fake().boxesOf(label).forEach(box -> found.add("box " + box));
    }
    return found;
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    fake().kill(backendSessionId);
  }
}
