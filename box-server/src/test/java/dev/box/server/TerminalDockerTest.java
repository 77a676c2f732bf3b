package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/** {@link TerminalContract} on Docker, whose processes start through the exec agent too. */
class TerminalDockerTest extends TerminalContract {
  @AutoClose private static final TestServer box = TestServer.start(TestServer.docker());

  @Override
  TestServer box() {
    return box;
  }
}
