package dev.box.testkit;

/**
 * The network escape suite against the Podman backend, through the real Podman service's
 * Docker-compatible API on this machine; the server runs in the machine's namespace, beside the
 * service, and the stand-in world is routed from there.
 */
class PodmanNetworkEscapeTest extends NetworkEscapeSuite {
  @Override
  protected String backendName() {
    return "podman";
  }
}
