package dev.box.backend.docker;

import dev.box.api.BoxNetworkMode;
import dev.box.core.backend.SandboxMount;
import dev.box.core.backend.SandboxSpec;
import dev.box.guard.ExecAgent;
import dev.box.guard.SyscallGuard;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The Engine API body that creates a session's container: the hardening, the session's limits and
 * mounts, the holder that keeps it running, and the labels orphan cleanup goes by.
 *
 * @param engine {@code docker} or {@code podman}
 * @param engineProfile the seccomp profile the engine applies
 * @param guard box-guard, mounted into the container when it is available
 * @param instanceId the id of this server instance, a label
 * @param dataLabel the hash of the server's data directory, a label
 * @param lease what ends the container once its server is gone
 * @param agent the exec agent to mount into containers, or null when processes start through the
 *     engine's exec API
 */
record ContainerCreateBody(
    String engine,
    EngineProfile engineProfile,
    SyscallGuard guard,
    String instanceId,
    String dataLabel,
    SandboxLease lease,
    @Nullable Path agent) {

  /**
   * The label of the containers of persistent sessions, which the next server of the data dir may
   * adopt when its predecessor crashed.
   */
  static final String PERSISTENT_LABEL = "dev.box.persistent";

  /** The label of pre-started containers, which carry no session id. */
  static final String POOL_LABEL = "dev.box.pool";

  /** The unprivileged user sandboxes run as, as in the bubblewrap backend. */
  static final String SANDBOX_USER = "1000:1000";

  /** The uid of {@link #SANDBOX_USER}, which owns what the sandbox may write in its mounts. */
  static final int SANDBOX_UID = 1000;

  /** The environment every container and exec starts with. */
  static final Map<String, String> BASE_ENV =
      Map.of(
          "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "HOME", "/tmp",
          "LANG", "C.UTF-8",
          "PYTHONUNBUFFERED", "1");

  /**
   * The body for the container of {@code spec} from {@code image}, with a CPU quota or not.
   *
   * @param storage the storage options that bound a writable root, or null for none
   * @param agentDir the directory of the exec agent's socket, or null without the agent
   */
  Map<String, Object> of(
      SandboxSpec spec,
      String image,
      boolean cpuLimit,
      @Nullable Map<String, String> storage,
      @Nullable Path agentDir) {
    return of(spec, image, cpuLimit, storage, agentDir, false);
  }

  /**
   * The body, for a pre-started container when {@code pooled}: labelled {@value #POOL_LABEL} and
   * with no session id (it has no session yet, and labels cannot change later), its workspace a
   * bind of a slot with {@code rslave} propagation, so that the workspace bound at the slot when a
   * session takes it appears inside.
   */
  Map<String, Object> of(
      SandboxSpec spec,
      String image,
      boolean cpuLimit,
      @Nullable Map<String, String> storage,
      @Nullable Path agentDir,
      boolean pooled) {
    Path binary = guard.binary();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("Image", image);
    // The lease's holder keeps the container running while its server lives. PID 1 is box-guard's
    // init when the guard is available (then it is filtered too: the engine's init is not, and a
    // process of the same user could rewrite it through /proc/1/mem), else the engine's init;
    // either reaps orphans, and either ends the container when the holder exits.
    Path agentBinary = agent;
    List<String> holder =
        agentBinary != null && agentDir != null
            ? ContainerAgent.holder(lease.holder())
            : lease.holder();
    body.put("Cmd", binary != null ? SyscallGuard.sandboxInitCommand(holder) : holder);
    body.put("Entrypoint", List.of());
    // An image's HEALTHCHECK would be exec'd by the engine itself, outside box-guard.
    body.put("Healthcheck", Map.of("Test", List.of("NONE")));
    body.put("User", SANDBOX_USER);
    body.put("WorkingDir", "/");
    body.put("Env", ContainerSandbox.envList(BASE_ENV));
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("langbot.box", "true");
    if (pooled) {
      labels.put(POOL_LABEL, "true");
    } else {
      labels.put("langbot.session_id", spec.sessionId());
    }
    labels.put("langbot.box.instance_id", instanceId);
    labels.put("dev.box.data", dataLabel);
    labels.put(PERSISTENT_LABEL, Boolean.toString(spec.persistent()));
    if (spec.root() != null) {
      labels.put(ContainerRoots.LABEL, image);
    }
    body.put("Labels", labels);
    List<SandboxMount> agentMounts =
        agentBinary != null && agentDir != null
            ? List.of(
                new SandboxMount(agentBinary, ExecAgent.SANDBOX_PATH, true),
                new SandboxMount(agentDir, ExecAgent.SOCKET_DIR, true))
            : List.of();
    Map<String, Object> host = hostConfig(spec, cpuLimit, binary, agentMounts, pooled);
    if (storage != null) {
      host.put("StorageOpt", storage);
    }
    body.put("HostConfig", host);
    return body;
  }

  private Map<String, Object> hostConfig(
      SandboxSpec spec,
      boolean cpuLimit,
      @Nullable Path guardBinary,
      List<SandboxMount> agentMounts,
      boolean pooled) {
    Map<String, Object> host = new LinkedHashMap<>();
    host.put("CapDrop", List.of("ALL"));
    List<String> securityOpt = new ArrayList<>(List.of("no-new-privileges"));
    engineProfile.securityOpt(engine).ifPresent(securityOpt::add);
    host.put("SecurityOpt", securityOpt);
    // box-guard's init replaces the engine's: see the holder in of().
    host.put("Init", !guard.available());
    host.put("PidsLimit", spec.pidsLimit());
    long memory = spec.memoryMb() * 1024L * 1024L;
    host.put("Memory", memory);
    host.put("MemorySwap", memory);
    if (cpuLimit) {
      host.put("NanoCpus", Math.round(spec.cpus() * 1_000_000_000d));
    }
    if (spec.network() == BoxNetworkMode.OFF) {
      host.put("NetworkMode", "none");
    }
    if (spec.readOnlyRootfs()) {
      host.put("ReadonlyRootfs", true);
      host.put("Tmpfs", Map.of("/tmp", "rw,nosuid,nodev,size=64m,mode=1777"));
    }
    host.put("Mounts", mounts(spec, guardBinary, lease, agentMounts, pooled));
    return host;
  }

  /** Mounts, not Binds: a path containing ':' cannot be mistaken for a mode or a second path. */
  private static List<Map<String, Object>> mounts(
      SandboxSpec spec,
      @Nullable Path guardBinary,
      SandboxLease lease,
      List<SandboxMount> agentMounts,
      boolean pooled) {
    List<Map<String, Object>> mounts = new ArrayList<>();
    SandboxMount workspace = spec.workspace();
    if (workspace != null) {
      Map<String, Object> mount = new LinkedHashMap<>(mount(workspace));
      if (pooled) {
        mount.put("BindOptions", Map.of("Propagation", "rslave"));
      }
      mounts.add(mount);
    }
    spec.extraMounts().forEach(m -> mounts.add(mount(m)));
    if (guardBinary != null) {
      mounts.add(mount(new SandboxMount(guardBinary, SyscallGuard.SANDBOX_PATH, true)));
    }
    mounts.add(mount(lease.mount()));
    agentMounts.forEach(m -> mounts.add(mount(m)));
    return mounts;
  }

  private static Map<String, Object> mount(SandboxMount mount) {
    return Map.of(
        "Type", "bind",
        "Source", mount.hostPath().toString(),
        "Target", mount.sandboxPath(),
        "ReadOnly", mount.readOnly());
  }
}
