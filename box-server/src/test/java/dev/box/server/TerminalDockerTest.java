package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/** {@link TerminalContract} on Docker, whose processes start through the exec agent too. */
class TerminalDockerTest extends TerminalContract {
  @AutoClose
  private static final TestServer box =
      TestServer.start(
          "backend",
          "docker",
          "image",
          System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm"),
          "docker_host",
          System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock"));

  @Override
  TestServer box() {
    return box;
  }
}
