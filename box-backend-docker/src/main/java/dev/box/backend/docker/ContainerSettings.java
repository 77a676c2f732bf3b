package dev.box.backend.docker;

import dev.box.sandbox.SandboxShape;
import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The settings of a container backend ({@link ContainerBackend}): which engine, and how to use it.
 *
 * @param engine {@code docker} or {@code podman}
 * @param socket the engine's API socket
 * @param defaultImage the image for specs that name none (that name the reference default), or null
 *     to use the spec's
 * @param cpuLimit whether containers get a CPU quota
 * @param pullTimeout how long pulling a missing image may take
 * @param seccompProfile the operator's seccomp profile (JSON) that the engine applies instead of
 *     its default, or null for the engine's default; Box's own filter applies under either
 * @param sandboxLease how long a container outlives its server
 * @param writableRootMb what a container with a writable root may write to it, in MiB, where the
 *     engine's storage bounds it ({@link WritableRoot}); 0 for no bound
 * @param execAgent whether processes start through an exec agent in each container (where the
 *     host's cgroups allow) rather than through the engine's exec API
 * @param poolSize how many containers of the {@linkplain SandboxShape#pooled pooled shape} wait,
 *     created and started ahead of their sessions; 0 for none
 */
public record ContainerSettings(
    String engine,
    Path socket,
    @Nullable String defaultImage,
    boolean cpuLimit,
    Duration pullTimeout,
    @Nullable Path seccompProfile,
    Duration sandboxLease,
    int writableRootMb,
    boolean execAgent,
    int poolSize) {

  /** How long, by default, a container outlives its server. */
  public static final Duration DEFAULT_SANDBOX_LEASE = Duration.ofSeconds(30);

  /** What, by default, a container with a writable root may write to it, in MiB. */
  public static final int DEFAULT_WRITABLE_ROOT_MB = 1024;

  /**
   * Settings with the engine's default seccomp profile, the default sandbox lease and writable
   * root, the exec agent, and no pre-started containers.
   */
  public ContainerSettings(
      String engine,
      Path socket,
      @Nullable String defaultImage,
      boolean cpuLimit,
      Duration pullTimeout) {
    this(
        engine,
        socket,
        defaultImage,
        cpuLimit,
        pullTimeout,
        null,
        DEFAULT_SANDBOX_LEASE,
        DEFAULT_WRITABLE_ROOT_MB,
        true,
        0);
  }

  /**
   * Checks an operator's seccomp profile file as the backend will read it: a readable JSON object
   * with a {@code defaultAction}.
   *
   * @throws IllegalArgumentException with a message for the operator when it cannot be used
   */
  public static void checkSeccompProfile(Path file) {
    String error = EngineProfile.read(file).error();
    if (error != null) {
      throw new IllegalArgumentException(error);
    }
  }
}
