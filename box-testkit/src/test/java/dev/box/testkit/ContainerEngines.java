package dev.box.testkit;

import java.util.Map;

/**
 * The server settings of the container suites: the engines and the image {@code scripts/engines up}
 * provides, from {@code DOCKER_SOCKET}, {@code PODMAN_SOCKET} and {@code BOX_TEST_IMAGE}.
 */
final class ContainerEngines {
  static final String IMAGE = System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm");

  private ContainerEngines() {}

  /** {@code image} and the socket of {@code backend} ({@code docker} or {@code podman}). */
  static Map<String, String> serverSettings(String backend) {
    String socket =
        backend.equals("docker")
            ? System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock")
            : System.getenv().getOrDefault("PODMAN_SOCKET", "/run/podman/podman.sock");
    return Map.of("image", IMAGE, backend.equals("docker") ? "docker_host" : "podman_host", socket);
  }
}
