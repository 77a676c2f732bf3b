package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/** {@link ForkContract} on Docker: the workspace is a host directory there too. */
class ForkDockerTest extends ForkContract {
  @AutoClose private static final TestServer box = TestServer.start(TestServer.docker());

  @Override
  TestServer box() {
    return box;
  }
}
