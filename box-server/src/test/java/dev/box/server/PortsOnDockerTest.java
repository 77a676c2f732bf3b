package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/**
 * {@link PortSuite} on Docker. The test image is a minimal Debian without Python, so the host's
 * Python (the same Debian release) is mounted read-only into the sandbox and run from there.
 */
class PortsOnDockerTest extends PortSuite {
  private static final String HOST_USR = "/opt/host-usr";

  @AutoClose private static final TestServer box = TestServer.start(TestServer.docker());

  @Override
  TestServer box() {
    return box;
  }

  @Override
  String specFields() {
    return "\"extra_mounts\":[{\"host_path\":\"/usr\",\"mount_path\":\""
        + HOST_USR
        + "\",\"mode\":\"ro\"}]";
  }

  @Override
  String serverProcess() {
    return "{\"process_id\":\"web\",\"command\":\""
        + HOST_USR
        + "/bin/python3\",\"args\":[\"-c\","
        + json(SCRIPT)
        + ",\""
        + PORT
        + "\"],\"env\":{\"PYTHONHOME\":\""
        + HOST_USR
        + "\",\"LD_LIBRARY_PATH\":\""
        + HOST_USR
        + "/lib/x86_64-linux-gnu\"}}";
  }
}
