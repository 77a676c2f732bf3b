package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/** {@link PauseContract} on Docker, frozen through the engine's pause API. */
class PauseDockerTest extends PauseContract {
  @AutoClose private static final TestServer box = TestServer.start(TestServer.docker());

  @Override
  TestServer box() {
    return box;
  }
}
