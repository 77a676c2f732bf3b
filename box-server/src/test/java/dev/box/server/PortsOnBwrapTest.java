package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/** {@link PortSuite} on bubblewrap, whose sandboxes run the host's python3. */
class PortsOnBwrapTest extends PortSuite {
  @AutoClose private static final TestServer box = TestServer.start();

  @Override
  TestServer box() {
    return box;
  }

  @Override
  String specFields() {
    return "";
  }

  @Override
  String serverProcess() {
    return "{\"process_id\":\"web\",\"command\":\"python3\",\"args\":[\"-c\","
        + json(SCRIPT)
        + ",\""
        + PORT
        + "\"]}";
  }
}
