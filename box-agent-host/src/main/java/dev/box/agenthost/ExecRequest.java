package dev.box.agenthost;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxNetworkMode;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What an agent asks to run: a command and the settings it chose. A null setting is one the agent
 * left out, which the {@linkplain ProfileRules profile} fills; a profile's locked fields replace
 * what the agent chose.
 *
 * @param command the shell command, run under {@code /bin/sh -c}
 * @param workdir the absolute directory inside the sandbox, or null for the mount path
 * @param timeoutSec the exec's timeout in seconds, clamped to the profile's maximum
 * @param env environment variables for the command
 * @param image the image of container backends
 * @param network the sandbox's network
 * @param hostPath the host directory mounted as the workspace, or null for the agent host's
 * @param hostPathMode how the workspace is mounted
 * @param cpus the CPU quota in cores
 * @param memoryMb the memory limit in MiB
 * @param pidsLimit the process limit
 * @param readOnlyRootfs whether the root filesystem is read-only
 * @param workspaceQuotaMb the workspace quota in MiB, 0 for none
 */
public record ExecRequest(
    String command,
    @Nullable String workdir,
    @Nullable Integer timeoutSec,
    Map<String, String> env,
    @Nullable String image,
    @Nullable BoxNetworkMode network,
    @Nullable String hostPath,
    @Nullable BoxHostMountMode hostPathMode,
    @Nullable Double cpus,
    @Nullable Integer memoryMb,
    @Nullable Integer pidsLimit,
    @Nullable Boolean readOnlyRootfs,
    @Nullable Integer workspaceQuotaMb) {

  /** Copies {@code env}. */
  public ExecRequest {
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
  }

  /** A request for {@code command} that leaves every setting to the profile. */
  public static ExecRequest of(String command) {
    return builder(command).build();
  }

  /** A builder of a request for {@code command}. */
  public static Builder builder(String command) {
    return new Builder(command);
  }

  /** A builder holding this request's values. */
  public Builder toBuilder() {
    Builder b = new Builder(command);
    b.workdir = workdir;
    b.timeoutSec = timeoutSec;
    b.env = new LinkedHashMap<>(env);
    b.image = image;
    b.network = network;
    b.hostPath = hostPath;
    b.hostPathMode = hostPathMode;
    b.cpus = cpus;
    b.memoryMb = memoryMb;
    b.pidsLimit = pidsLimit;
    b.readOnlyRootfs = readOnlyRootfs;
    b.workspaceQuotaMb = workspaceQuotaMb;
    return b;
  }

  /** Builds an {@link ExecRequest}; every setting starts absent. */
  public static final class Builder {
    private String command;
    private @Nullable String workdir;
    private @Nullable Integer timeoutSec;
    private Map<String, String> env = new LinkedHashMap<>();
    private @Nullable String image;
    private @Nullable BoxNetworkMode network;
    private @Nullable String hostPath;
    private @Nullable BoxHostMountMode hostPathMode;
    private @Nullable Double cpus;
    private @Nullable Integer memoryMb;
    private @Nullable Integer pidsLimit;
    private @Nullable Boolean readOnlyRootfs;
    private @Nullable Integer workspaceQuotaMb;

    private Builder(String command) {
      this.command = command;
    }

    /** Sets the command. */
    public Builder command(String value) {
      command = value;
      return this;
    }

    /** Sets the working directory. */
    public Builder workdir(@Nullable String value) {
      workdir = value;
      return this;
    }

    /** Sets the timeout in seconds. */
    public Builder timeoutSec(@Nullable Integer value) {
      timeoutSec = value;
      return this;
    }

    /** Adds an environment variable. */
    public Builder env(String key, String value) {
      env.put(key, value);
      return this;
    }

    /** Replaces the environment variables. */
    public Builder env(Map<String, String> value) {
      env = new LinkedHashMap<>(value);
      return this;
    }

    /** Sets the image. */
    public Builder image(@Nullable String value) {
      image = value;
      return this;
    }

    /** Sets the network mode. */
    public Builder network(@Nullable BoxNetworkMode value) {
      network = value;
      return this;
    }

    /** Sets the host directory mounted as the workspace. */
    public Builder hostPath(@Nullable String value) {
      hostPath = value;
      return this;
    }

    /** Sets how the workspace is mounted. */
    public Builder hostPathMode(@Nullable BoxHostMountMode value) {
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

    /** Sets the workspace quota in MiB. */
    public Builder workspaceQuotaMb(@Nullable Integer value) {
      workspaceQuotaMb = value;
      return this;
    }

    /** The request. */
    public ExecRequest build() {
      return new ExecRequest(
          command,
          workdir,
          timeoutSec,
          env,
          image,
          network,
          hostPath,
          hostPathMode,
          cpus,
          memoryMb,
          pidsLimit,
          readOnlyRootfs,
          workspaceQuotaMb);
    }
  }
}
