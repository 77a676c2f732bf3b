package dev.box.testkit;

import dev.box.backend.boxlite.FakeBoxlite;
import java.io.IOException;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The conformance suite against the BoxLite backend, over {@link FakeBoxlite}: a fake, because
 * BoxLite needs KVM and libkrun, which this machine lacks. The fake speaks BoxLite's published REST
 * API and attach WebSocket on loopback and runs the executions as real processes in a private
 * directory per box, so everything Box does over the wire is real; what the fake does not model is
 * listed in its Javadoc. The backend's host-side objects are the fake's boxes whose name Box gave
 * for one of the suite's state directories. Boxes outlive their server, so a persistent session's
 * box is adopted after a crash.
 */
class BoxliteConformanceTest extends FakeServiceConformance<FakeBoxlite> {
  @Override
  protected String backendName() {
    return "boxlite";
  }

  @Override
  protected FakeBoxlite start(String token) throws IOException {
    return FakeBoxlite.start(token);
  }

  @Override
  protected Map<String, String> serverSettings() {
    return Map.of("boxlite_url", fake().url(), "boxlite_token", secret, "image", "box-testkit");
  }

  @Override
  protected boolean adoptsAfterACrash() {
    return true;
  }

  @Override
  protected Stream<String> machinesOf(FakeBoxlite fake, String label) {
    return fake.boxesOf(label).stream().map(box -> "box " + box);
  }

  @Override
  protected void killSandboxFromOutside(String backendSessionId) {
    fake().kill(backendSessionId);
  }
}
