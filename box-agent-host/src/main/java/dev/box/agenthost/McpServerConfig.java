package dev.box.agenthost;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxNetworkMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * @param sandbox the shared session's settings: an absent network is the reference's {@link
 *     #DEFAULT_NETWORK}, an absent mount mode of the agent host's workspace {@link
 *     #DEFAULT_HOST_PATH_MODE} (a Python project whose dependencies are installed needs rw), an
 *     absent memory limit {@link #DEFAULT_MEMORY_MB}, an absent root file system writable; the
 *     workspace is always the agent host's, and a workspace quota is not applied
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
    SandboxSettings sandbox,
    Duration startupTimeout) {

  /** The memory limit of MCP sessions when none is set (the reference's default_memory_mb). */
  public static final int DEFAULT_MEMORY_MB = 1536;

  /** The network of MCP sessions when none is set: on, as the reference's. */
  public static final BoxNetworkMode DEFAULT_NETWORK = BoxNetworkMode.ON;

  /** How the agent host's workspace is mounted in MCP sessions when the settings say nothing. */
  public static final BoxHostMountMode DEFAULT_HOST_PATH_MODE = BoxHostMountMode.RO;

  /** Copies the collections. */
  public McpServerConfig {
    args = List.copyOf(args);
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
  }

  /** A builder of a server run as {@code command args...} under the process id {@code id}. */
  public static Builder builder(String processId, String command, String... args) {
    return new Builder(processId, command, List.of(args));
  }

  /** The network the shared session gets. */
  public BoxNetworkMode network() {
    return Objects.requireNonNullElse(sandbox.network(), DEFAULT_NETWORK);
  }

  /** How the agent host's workspace is mounted in the shared session. */
  public BoxHostMountMode hostPathMode() {
    return Objects.requireNonNullElse(sandbox.hostPathMode(), DEFAULT_HOST_PATH_MODE);
  }

  /** Builds a {@link McpServerConfig} with the reference's defaults. */
  public static final class Builder {
    private final String processId;
    private final String command;
    private final List<String> args;
    private Map<String, String> env = new LinkedHashMap<>();
    private @Nullable Path hostPath;
    private boolean inferHostPath = true;
    private SandboxSettings sandbox = SandboxSettings.NONE;
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

    /** Sets the shared session's settings. */
    public Builder sandbox(SandboxSettings value) {
      sandbox = value;
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
          processId, command, args, env, hostPath, inferHostPath, sandbox, startupTimeout);
    }
  }
}
