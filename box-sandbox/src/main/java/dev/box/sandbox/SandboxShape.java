package dev.box.sandbox;

import dev.box.api.BoxEgress;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxSpec;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Everything of a {@link SandboxSpec} that changes how a backend makes the sandbox (a jail's
 * arguments or configuration, a container's create body) or its cgroups: two specs of equal shape
 * start sandboxes that differ only in their names and in the host directory bound at the workspace.
 * What is left out is bound or checked when a pre-started sandbox is taken: the session id and the
 * sandbox name, the workspace's host path, and what a backend checks on its own (a container's
 * image, whether the session is persistent; see {@link SandboxPool}'s {@code accepts}).
 *
 * @param network the network mode
 * @param workspacePath where the workspace appears inside the sandbox, or null for none
 * @param workspaceReadOnly whether the workspace is mounted read-only
 * @param extraMounts the further mounts, host paths included
 * @param readOnlyRootfs whether the root filesystem is read-only
 * @param cpus CPU quota in cores
 * @param memoryMb memory limit in MiB
 * @param pidsLimit process limit
 * @param egress the session's own egress rules
 */
public record SandboxShape(
    BoxNetworkMode network,
    @Nullable String workspacePath,
    boolean workspaceReadOnly,
    List<SandboxMount> extraMounts,
    boolean readOnlyRootfs,
    double cpus,
    int memoryMb,
    int pidsLimit,
    BoxEgress egress) {

  /** Copies {@code extraMounts}. */
  public SandboxShape {
    extraMounts = List.copyOf(extraMounts);
  }

  /**
   * The shape the pool pre-starts: what LangBot sends and what a request that names nothing gets.
   * Network off, the workspace read-write at {@code /workspace} (a {@code host_path} or a private
   * one), no extra mounts, no egress rules, and the default limits and read-only root of {@link
   * BoxSpec}.
   */
  public static SandboxShape pooled() {
    BoxSpec defaults = BoxSpec.builder("pool").build();
    return new SandboxShape(
        BoxNetworkMode.OFF,
        BoxSpec.DEFAULT_MOUNT_PATH,
        false,
        List.of(),
        defaults.readOnlyRootfs(),
        defaults.cpus(),
        defaults.memoryMb(),
        defaults.pidsLimit(),
        BoxEgress.NONE);
  }

  /** The shape of {@code spec}. */
  public static SandboxShape of(SandboxSpec spec) {
    SandboxMount workspace = spec.workspace();
    return new SandboxShape(
        spec.network(),
        workspace == null ? null : workspace.sandboxPath(),
        workspace != null && workspace.readOnly(),
        spec.extraMounts(),
        spec.readOnlyRootfs(),
        spec.cpus(),
        spec.memoryMb(),
        spec.pidsLimit(),
        spec.egress());
  }

  /** A spec of this shape, with its workspace bound from {@code workspaceHost}. */
  public SandboxSpec spec(String sandboxName, String instanceId, String image, Path workspaceHost) {
    String path = workspacePath;
    return new SandboxSpec(
        sandboxName,
        sandboxName,
        instanceId,
        image,
        network,
        path == null ? null : new SandboxMount(workspaceHost, path, workspaceReadOnly, true),
        extraMounts,
        readOnlyRootfs,
        cpus,
        memoryMb,
        pidsLimit,
        egress,
        false,
        null);
  }

  /** The shape in a few words, for the health report. */
  public String describe() {
    return "network "
        + network.name().toLowerCase(Locale.ROOT)
        + ", "
        + (workspacePath == null
            ? "no workspace"
            : workspacePath + (workspaceReadOnly ? " read-only" : " read-write"))
        + (extraMounts.isEmpty() ? "" : ", " + extraMounts.size() + " extra mounts")
        + (readOnlyRootfs ? ", read-only root" : ", writable root")
        + ", "
        + cpus
        + " cpus, "
        + memoryMb
        + " MiB, "
        + pidsLimit
        + " pids";
  }
}
