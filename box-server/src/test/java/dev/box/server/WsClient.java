package dev.box.server;

import dev.box.testclient.Answer;
import dev.box.testclient.BoxSocket;
import java.util.HashMap;
import java.util.Map;

/**
 * Opens {@link BoxSocket}s to a {@link TestServer} with the headers its HTTP client sends (the
 * server's control token, unless a test replaced it).
 */
final class WsClient {
  private WsClient() {}

  /** Connects with the server's control token, as {@link TestServer} sends it. */
  static BoxSocket connect(TestServer box, String path) {
    return connect(box, path, Map.of());
  }

  /** Connects with the server's control token and {@code headers} (which may replace it). */
  static BoxSocket connect(TestServer box, String path, Map<String, String> headers) {
    Map<String, String> all = new HashMap<>(box.headers());
    all.putAll(headers);
    return BoxSocket.connect(box.server.port(), path, all);
  }

  static BoxSocket connect(int port, String path, Map<String, String> headers) {
    return BoxSocket.connect(port, path, headers);
  }

  /**
   * The status and JSON body of a refused WebSocket handshake to {@code path} with the server's
   * control token.
   */
  static Answer refusal(TestServer box, String path) {
    return refusal(box, path, box.headers());
  }

  /** As {@link #refusal(TestServer, String)}, with {@code headers} only. */
  static Answer refusal(TestServer box, String path, Map<String, String> headers) {
    return BoxSocket.refusal(box.server.port(), path, headers);
  }
}
