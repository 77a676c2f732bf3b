package dev.box.server;

import org.junit.jupiter.api.AutoClose;

/** {@link ContainerForkContract} on Podman, through its Docker-compatible API socket. */
class ForkPodmanTest extends ContainerForkContract {
  @AutoClose private static final TestServer box = TestServer.start(TestServer.podman());

  @Override
  TestServer box() {
    return box;
  }

  @Override
  String[] settings() {
    return TestServer.podman();
  }

  @Override
  EngineImages engine() {
    return EngineImages.podman();
  }
}
