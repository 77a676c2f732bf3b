package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/**
 * {@link ContainerForkContract} on Docker: the workspace is a host directory there too, and the
 * writable root is copied as an image committed from the container.
 */
class ForkDockerTest extends ContainerForkContract {
  @AutoClose private static final TestServer box = TestServer.start(TestServer.docker());

  @Override
  TestServer box() {
    return box;
  }

  @Override
  String[] settings() {
    return TestServer.docker();
  }

  @Override
  EngineImages engine() {
    return EngineImages.docker();
  }
}
