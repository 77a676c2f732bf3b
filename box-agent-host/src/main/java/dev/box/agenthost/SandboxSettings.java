package dev.box.agenthost;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The sandbox an agent asks for, field by field as {@link BoxSpec} names them, each null when the
 * agent left it out: {@link ProfileRules} fills an exec's from the profile, {@link McpLauncher} an
 * MCP server's from its defaults. The one declaration of these fields for {@link ExecRequest} and
 * {@link McpServerConfig}.
 *
 * @param image the image of container backends
 * @param network the sandbox's network
 * @param hostPath the host directory mounted as the workspace
 * @param hostPathMode how the workspace is mounted
 * @param cpus the CPU quota in cores
 * @param memoryMb the memory limit in MiB
 * @param pidsLimit the process limit
 * @param readOnlyRootfs whether the root filesystem is read-only
 * @param workspaceQuotaMb the workspace quota in MiB, 0 for none
 * @param extraMounts further host directories to mount, such as a package cache
 */
public record SandboxSettings(
    @Nullable String image,
    @Nullable BoxNetworkMode network,
    @Nullable String hostPath,
    @Nullable BoxHostMountMode hostPathMode,
    @Nullable Double cpus,
    @Nullable Integer memoryMb,
    @Nullable Integer pidsLimit,
    @Nullable Boolean readOnlyRootfs,
    @Nullable Integer workspaceQuotaMb,
    List<BoxMountSpec> extraMounts) {

  /** Nothing asked for: every field left to the profile or the defaults. */
  public static final SandboxSettings NONE = builder().build();

  /** Copies {@code extraMounts}. */
  public SandboxSettings {
    extraMounts = List.copyOf(extraMounts);
  }

  /** A builder with every field absent. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these settings. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.image = image;
    b.network = network;
    b.hostPath = hostPath;
    b.hostPathMode = hostPathMode;
    b.cpus = cpus;
    b.memoryMb = memoryMb;
    b.pidsLimit = pidsLimit;
    b.readOnlyRootfs = readOnlyRootfs;
    b.workspaceQuotaMb = workspaceQuotaMb;
    b.extraMounts.addAll(extraMounts);
    return b;
  }

  /** Sets every field present here on {@code spec}, and leaves the others as they are. */
  public BoxSpec.Builder applyTo(BoxSpec.Builder spec) {
    if (image != null) spec.image(image);
    if (network != null) spec.network(network);
    if (hostPath != null) spec.hostPath(hostPath);
    if (hostPathMode != null) spec.hostPathMode(hostPathMode);
    if (cpus != null) spec.cpus(cpus);
    if (memoryMb != null) spec.memoryMb(memoryMb);
    if (pidsLimit != null) spec.pidsLimit(pidsLimit);
    if (readOnlyRootfs != null) spec.readOnlyRootfs(readOnlyRootfs);
    if (workspaceQuotaMb != null) spec.workspaceQuotaMb(workspaceQuotaMb);
    if (!extraMounts.isEmpty()) spec.extraMounts(extraMounts);
    return spec;
  }

  /** Builds {@link SandboxSettings}; a null value leaves its field absent. */
  public static final class Builder {
    private @Nullable String image;
    private @Nullable BoxNetworkMode network;
    private @Nullable String hostPath;
    private @Nullable BoxHostMountMode hostPathMode;
    private @Nullable Double cpus;
    private @Nullable Integer memoryMb;
    private @Nullable Integer pidsLimit;
    private @Nullable Boolean readOnlyRootfs;
    private @Nullable Integer workspaceQuotaMb;
    private final List<BoxMountSpec> extraMounts = new ArrayList<>();

    private Builder() {}

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

    /** Mounts a further host directory. */
    public Builder extraMount(BoxMountSpec mount) {
      extraMounts.add(mount);
      return this;
    }

    /** The settings. */
    public SandboxSettings build() {
      return new SandboxSettings(
          image,
          network,
          hostPath,
          hostPathMode,
          cpus,
          memoryMb,
          pidsLimit,
          readOnlyRootfs,
          workspaceQuotaMb,
          extraMounts);
    }
  }
}
