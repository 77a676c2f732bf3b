package dev.box.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.server.BoxServer;
import dev.box.testclient.BoxHttp;
import java.io.IOException;
import java.util.Map;

/**
 * The server a suite class starts once for all its tests: the fleet it belongs to (which a test may
 * ask for more servers), a client of it, and the health it reported at start.
 */
final class SuiteServer implements AutoCloseable {
  final ServerFleet fleet;
  final BoxHttp http;
  final JsonNode health;

  private SuiteServer(ServerFleet fleet, BoxHttp http, JsonNode health) {
    this.fleet = fleet;
    this.http = http;
    this.health = health;
  }

  /**
   * Starts a fleet for {@code backend} with {@code settings}, and its first server with {@code
   * extra} over them.
   */
  static SuiteServer start(String backend, Map<String, String> settings, Map<String, String> extra)
      throws IOException {
    ServerFleet fleet = new ServerFleet(backend, settings);
    BoxServer server = fleet.start(fleet.newDataDir(), extra);
    BoxHttp http = ServerFleet.http(server.port());
    return new SuiteServer(fleet, http, http.get("/v1/health").body());
  }

  @Override
  public void close() throws IOException {
    fleet.close();
  }
}
