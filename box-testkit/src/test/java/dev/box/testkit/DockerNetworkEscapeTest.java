package dev.box.testkit;

/**
 * The network escape suite against the Docker backend and the real Docker Engine of this machine;
 * the server runs in the machine's namespace, beside the daemon, and the stand-in world is routed
 * from there.
 */
class DockerNetworkEscapeTest extends NetworkEscapeSuite {
  @Override
  protected String backendName() {
    return "docker";
  }
}
