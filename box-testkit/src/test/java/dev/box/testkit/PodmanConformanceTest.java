package dev.box.testkit;

/**
 * The conformance suite against the Podman backend, through the real Podman service's
 * Docker-compatible API on this machine.
 */
class PodmanConformanceTest extends ContainerConformance {
  @Override
  protected String backendName() {
    return "podman";
  }
}
