package dev.box.server;

import dev.box.backend.docker.ContainerSettings;
import dev.box.core.settings.IntSetting;
import dev.box.core.settings.RuntimeLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The settings of the container backends (Docker and Podman).
 *
 * @param image the image of sessions whose spec names none, or null for the spec's default
 * @param dockerSocket the Docker Engine API's Unix socket
 * @param podmanSocket the Podman service's Docker-compatible Unix socket
 * @param cpuLimit whether containers get {@code --cpus}; false starts them without a CPU quota
 * @param pullTimeout how long pulling a missing image may take before session creation fails
 * @param seccompProfile a seccomp profile (JSON) the engine applies instead of its default, checked
 *     at startup; null for the engine's default. Box's own filter applies under either.
 * @param sandboxLease how long a container outlives its server when the server dies without
 *     removing it ({@code sandbox_lease_sec}, 30)
 * @param writableRootMb what a container with a writable root may write to it, in MiB, where the
 *     engine's storage bounds it ({@code writable_root_mb}, 1024; 0 for no bound)
 */
public record ContainerConfig(
    @Nullable String image,
    String dockerSocket,
    String podmanSocket,
    boolean cpuLimit,
    Duration pullTimeout,
    @Nullable Path seccompProfile,
    Duration sandboxLease,
    int writableRootMb) {

  private static final IntSetting PULL_TIMEOUT_SEC =
      new IntSetting("pull_timeout_sec", 300, 1, 3600);

  /** How long a container outlives its server (see the container backends' sandbox lease). */
  private static final IntSetting SANDBOX_LEASE_SEC =
      new IntSetting("sandbox_lease_sec", 30, 3, 3600);

  /** What a container may write to a writable root (see the container backends). */
  private static final IntSetting WRITABLE_ROOT_MB =
      new IntSetting(
          "writable_root_mb", ContainerSettings.DEFAULT_WRITABLE_ROOT_MB, 0, 1024 * 1024);

  private static final String IMAGE = "image";
  private static final String DOCKER_HOST = "docker_host";
  private static final String PODMAN_HOST = "podman_host";
  private static final String DOCKER_CPU_LIMIT = "docker_cpu_limit";
  private static final String SECCOMP_PROFILE = "seccomp_profile";

  /** The keys {@link #read} reads. */
  static final List<String> KEYS =
      List.of(
          IMAGE,
          DOCKER_HOST,
          PODMAN_HOST,
          DOCKER_CPU_LIMIT,
          PULL_TIMEOUT_SEC.key(),
          SECCOMP_PROFILE,
          SANDBOX_LEASE_SEC.key(),
          WRITABLE_ROOT_MB.key());

  /**
   * Reads the settings from the resolved values of {@code box serve}.
   *
   * @param values the settings by key ({@code image}, {@code docker_host}, ...)
   * @param env the process environment: {@code DOCKER_HOST} names the Docker socket when {@code
   *     docker_host} does not and it is a {@code unix://} address
   * @throws IllegalArgumentException with a message for the user when a value is invalid
   */
  static ContainerConfig read(Map<String, String> values, Map<String, String> env) {
    String image = values.get(IMAGE);
    String dockerHost = values.get(DOCKER_HOST);
    if (dockerHost == null || dockerHost.isBlank()) {
      String fromDocker = env.get("DOCKER_HOST");
      dockerHost =
          fromDocker != null && fromDocker.startsWith("unix://")
              ? fromDocker
              : "/var/run/docker.sock";
    }
    return new ContainerConfig(
        image == null || image.isBlank() ? null : image.strip(),
        socketPath(DOCKER_HOST, dockerHost),
        socketPath(PODMAN_HOST, values.getOrDefault(PODMAN_HOST, "/run/podman/podman.sock")),
        RuntimeLimits.CPU_LIMIT.parse(values.get(DOCKER_CPU_LIMIT)),
        Duration.ofSeconds(PULL_TIMEOUT_SEC.read(values)),
        seccompProfile(values.get(SECCOMP_PROFILE)),
        Duration.ofSeconds(SANDBOX_LEASE_SEC.read(values)),
        WRITABLE_ROOT_MB.read(values));
  }

  /** The container engines' seccomp profile file, checked now, or null for their default. */
  private static @Nullable Path seccompProfile(@Nullable String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    Path file = Path.of(value.strip()).toAbsolutePath().normalize();
    ContainerSettings.checkSeccompProfile(file);
    return file;
  }

  /** Accepts {@code unix:///path} or an absolute path; Box speaks to engines over Unix sockets. */
  private static String socketPath(String key, String value) {
    String path = value.strip();
    if (path.startsWith("unix://")) {
      path = path.substring("unix://".length());
    }
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException(
          key + " must be a Unix socket (unix:///path or an absolute path), not '" + value + "'");
    }
    return path;
  }
}
