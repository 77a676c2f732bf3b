package dev.box.testkit;

import java.util.Map;

/**
 * The server settings the suites start a container backend's server with by default: the engines
 * and the image {@code scripts/engines up} provides, from {@code DOCKER_SOCKET}, {@code
 * PODMAN_SOCKET} and {@code BOX_TEST_IMAGE}.
 */
final class ContainerEngines {
  private static final String IMAGE =
      System.getenv().getOrDefault("BOX_TEST_IMAGE", "box-debian:bookworm");

  private ContainerEngines() {}

  /**
   * {@code image} and the socket of {@code backend} when it is {@code docker} or {@code podman};
   * nothing for any other backend.
   */
  static Map<String, String> serverSettings(String backend) {
    return switch (backend) {
      case "docker" ->
          Map.of(
              "image",
              IMAGE,
              "docker_host",
              System.getenv().getOrDefault("DOCKER_SOCKET", "/var/run/docker.sock"));
      case "podman" ->
          Map.of(
              "image",
              IMAGE,
              "podman_host",
              System.getenv().getOrDefault("PODMAN_SOCKET", "/run/podman/podman.sock"));
      default -> Map.of();
    };
  }
}
