package dev.box.server;

import java.nio.file.Path;
import java.time.Duration;
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
 */
public record ContainerConfig(
    @Nullable String image,
    String dockerSocket,
    String podmanSocket,
    boolean cpuLimit,
    Duration pullTimeout,
    @Nullable Path seccompProfile) {}
