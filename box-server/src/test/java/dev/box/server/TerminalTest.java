package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/** {@link TerminalContract} on bubblewrap, whose processes start through the exec agent. */
class TerminalTest extends TerminalContract {
  @AutoClose private static final TestServer box = TestServer.start();

  @Override
  TestServer box() {
    return box;
  }
}
