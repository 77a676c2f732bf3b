package dev.box.sandbox;

import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxSpec;
import dev.box.core.net.EgressPolicy;
import dev.box.guard.SyscallGuard;
import java.nio.file.Path;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * What a namespace backend (bwrap, nsjail) is opened with.
 *
 * @param dataDir the runtime's data directory
 * @param instanceId the id of this server instance
 * @param useCgroups false to run without cgroups (then pids and cpu are not limited)
 * @param sandboxUid the host uid (and gid) the sandbox user is
 * @param egress the operator's egress policy for network-on sandboxes
 * @param syscallGuard the syscall guard every sandbox process runs through, when available
 * @param execAgent whether processes start through the exec agent in each sandbox (when it, the
 *     guard and cgroups are available) rather than through nsenter
 * @param poolSize how many sandboxes of the {@linkplain SandboxShape#pooled pooled shape} wait,
 *     started ahead of their sessions; 0 for none
 * @param runtime the clock and the threads the backend runs on
 */
public record NamespaceSettings(
    Path dataDir,
    String instanceId,
    boolean useCgroups,
    int sandboxUid,
    EgressPolicy egress,
    SyscallGuard syscallGuard,
    boolean execAgent,
    int poolSize,
    BackendRuntime runtime) {

  /**
   * The pool of a namespace backend named {@code backend}, of this data directory, instance, size
   * and runtime: none when the backend is not {@code available}.
   *
   * @param accepts what a spec of the pooled shape must also satisfy to take a sandbox
   * @param starter starts one sandbox of a spec, as the backend does for a session
   */
  public PreStarted preStarted(
      String backend,
      boolean available,
      PreStarted.SlotStore store,
      Predicate<SandboxSpec> accepts,
      Function<SandboxSpec, Sandbox> starter) {
    return PreStarted.open(
        backend, dataDir, instanceId, available ? poolSize : 0, store, accepts, starter, runtime);
  }

  /**
   * The idmapped mounts of {@code backend}'s sandboxes: none without the guard, whose filter alone
   * keeps set-id bits off what a sandbox writes through them.
   */
  public IdmappedMounts idmappedMounts(String backend) {
    return new IdmappedMounts(dataDir, backend, instanceId, sandboxUid, guard() != null);
  }

  /** The guard's binary on the host, or null when the guard is not available. */
  public @Nullable Path guard() {
    return syscallGuard.available() ? syscallGuard.binary() : null;
  }

  /** The seccomp policy sandboxes run under: the guard's, or {@link SyscallGuard#NONE}. */
  public String guardPolicy() {
    return guard() != null ? syscallGuard.policy() : SyscallGuard.NONE;
  }
}
