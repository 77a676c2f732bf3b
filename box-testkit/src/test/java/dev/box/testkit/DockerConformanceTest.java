package dev.box.testkit;

/** The conformance suite against the Docker backend and the real Docker Engine of this machine. */
class DockerConformanceTest extends ContainerConformance {
  @Override
  protected String backendName() {
    return "docker";
  }
}
