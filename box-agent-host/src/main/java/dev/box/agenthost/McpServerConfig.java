package dev.box.agenthost;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxNetworkMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A stdio MCP server to run in a sandbox, with the reference's per-server box settings.
 *
 * @param processId the server's process id in the shared MCP session (the reference uses the
 *     server's UUID)
 * @param command the program, as on the host: a host path under {@code hostPath} is rewritten to
 *     its staged copy, a host virtualenv's interpreter to {@code python}
 * @param args its arguments, host paths under {@code hostPath} rewritten likewise
 * @param env its environment variables
 * @param hostPath the host project to stage into the sandbox, or null to infer it from absolute
 *     paths in {@code command} and {@code args} that exist (see {@link McpStaging#inferHostPath})
 * @param inferHostPath whether to infer {@code hostPath} when it is null
 * @param image the image, or null for the default
 * @param network the network (the reference's default: on)
 * @param hostPathMode how the agent host's workspace is mounted (the reference's default: ro; a
 *     Python project whose dependencies are installed needs rw)
 * @param cpus the CPU quota, or null for the default
 * @param memoryMb the memory limit in MiB, or null for the reference's 1,536
 * @param pidsLimit the process limit, or null for the default
 * @param readOnlyRootfs whether the root filesystem is read-only, or null for false
 * @param extraMounts further host directories to mount, such as a package cache
 * @param startupTimeout how long Box may be unavailable, dependencies install and the server start
 *     (the reference's 300 s)
 */
public record McpServerConfig(
    String processId,
    String command,
    List<String> args,
    Map<String, String> env,
    @Nullable Path hostPath,
    boolean inferHostPath,
    @Nullable String image,
    BoxNetworkMode network,
    BoxHostMountMode hostPathMode,
    @Nullable Double cpus,
    @Nullable Integer memoryMb,
    @Nullable Integer pidsLimit,
    @Nullable Boolean readOnlyRootfs,
    List<BoxMountSpec> extraMounts,
    Duration startupTimeout) {

  /** The memory limit of MCP sessions when none is set (the reference's default_memory_mb). */
  public static final int DEFAULT_MEMORY_MB = 1536;

  /** Copies the collections. */
  public McpServerConfig {
    args = List.copyOf(args);
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
    extraMounts = List.copyOf(extraMounts);
  }

  /** A builder of a server run as {@code command args...} under the process id {@code id}. */
  public static Builder builder(String processId, String command, String... args) {
    return new Builder(processId, command, List.of(args));
  }

  /** Builds a {@link McpServerConfig} with the reference's defaults. */
  public static final class Builder {
    private final String processId;
    private final String command;
    private final List<String> args;
    private Map<String, String> env = new LinkedHashMap<>();
    private @Nullable Path hostPath;
    private boolean inferHostPath = true;
    private @Nullable String image;
    private BoxNetworkMode network = BoxNetworkMode.ON;
    private BoxHostMountMode hostPathMode = BoxHostMountMode.RO;
    private @Nullable Double cpus;
    private @Nullable Integer memoryMb;
    private @Nullable Integer pidsLimit;
    private @Nullable Boolean readOnlyRootfs;
    private final List<BoxMountSpec> extraMounts = new ArrayList<>();
    private Duration startupTimeout = Duration.ofSeconds(300);

    private Builder(String processId, String command, List<String> args) {
      this.processId = processId;
      this.command = command;
      this.args = args;
    }

    /** Sets the environment variables. */
    public Builder env(Map<String, String> value) {
      env = new LinkedHashMap<>(value);
      return this;
    }

    /** Stages {@code dir} into the sandbox; null infers it. */
    public Builder hostPath(@Nullable Path dir) {
      hostPath = dir;
      return this;
    }

    /** Whether to infer the host project when none is set (default true). */
    public Builder inferHostPath(boolean value) {
      inferHostPath = value;
      return this;
    }

    /** Sets the image. */
    public Builder image(@Nullable String value) {
      image = value;
      return this;
    }

    /** Sets the network. */
    public Builder network(BoxNetworkMode value) {
      network = value;
      return this;
    }

    /** Sets how the workspace is mounted. */
    public Builder hostPathMode(BoxHostMountMode value) {
      hostPathMode = value;
      return this;
    }

    /** Sets the CPU quota. */
    public Builder cpus(@Nullable Double value) {
      cpus = value;
      return this;
    }

    /** Sets the memory limit in MiB. */
    public Builder memoryMb(@Nullable Integer value) {
      memoryMb = value;
      return this;
    }

    /** Sets the process limit. */
    public Builder pidsLimit(@Nullable Integer value) {
      pidsLimit = value;
      return this;
    }

    /** Sets whether the root filesystem is read-only. */
    public Builder readOnlyRootfs(@Nullable Boolean value) {
      readOnlyRootfs = value;
      return this;
    }

    /** Mounts a further host directory. */
    public Builder extraMount(BoxMountSpec mount) {
      extraMounts.add(mount);
      return this;
    }

    /** Sets the startup timeout. */
    public Builder startupTimeout(Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("the startup timeout must be positive");
      }
      startupTimeout = value;
      return this;
    }

    /** The config. */
    public McpServerConfig build() {
      return new McpServerConfig(
          processId,
          command,
          args,
          env,
          hostPath,
          inferHostPath,
          image,
          network,
          hostPathMode,
          cpus,
          memoryMb,
          pidsLimit,
          readOnlyRootfs,
          extraMounts,
          startupTimeout);
    }
  }
}
