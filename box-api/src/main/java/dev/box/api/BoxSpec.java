package dev.box.api;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One exec request, and the template of the session it runs in.
 *
 * <p>The session fields ({@code network}, {@code image}, {@code host_path}, {@code host_path_mode},
 * {@code mount_path}, {@code persistent}, {@code cpus}, {@code memory_mb}, {@code pids_limit},
 * {@code read_only_rootfs}, {@code workspace_quota_mb}, {@code extra_mounts} and {@code egress})
 * shape the sandbox when it is created; {@code cmd}, {@code workdir}, {@code timeout_sec} and
 * {@code env} belong to one exec. The constructor validates every field and throws {@link
 * BoxValidationException} with the reference runtime's message.
 *
 * @param cmd the command, run under {@code /bin/sh -c}; may be empty when only creating a session
 * @param workdir the absolute directory inside the sandbox the command runs in (created if missing)
 * @param timeoutSec the hard wall-clock limit of one exec, in seconds
 * @param network whether the sandbox has network access
 * @param sessionId the id of the session to run in or create
 * @param env environment variables for the command
 * @param image the image of container backends (metadata for bubblewrap)
 * @param hostPath the host directory mounted at {@code mountPath}, or null for a private workspace
 * @param hostPathMode how {@code hostPath} is mounted
 * @param mountPath where the workspace appears inside the sandbox
 * @param extraMounts further host directories to mount
 * @param skillName the skill this request belongs to, if any
 * @param persistent whether the session is kept when idle
 * @param cpus the CPU quota in cores
 * @param memoryMb the memory limit in MiB (no swap beyond it)
 * @param pidsLimit the maximum number of processes and threads
 * @param readOnlyRootfs whether the root filesystem is read-only
 * @param workspaceQuotaMb the workspace quota in MiB, 0 for none: a private workspace is a file
 *     system of that size; a {@code host_path} workspace is not bounded
 * @param egress the session's own egress rules (network-on sessions), within the operator's
 * @param fromSnapshot the snapshot whose copy a new session's private workspace starts as, or null
 *     for an empty one; a session that exists already ignores it
 */
public record BoxSpec(
    String cmd,
    String workdir,
    int timeoutSec,
    BoxNetworkMode network,
    String sessionId,
    Map<String, String> env,
    String image,
    @Nullable String hostPath,
    BoxHostMountMode hostPathMode,
    String mountPath,
    List<BoxMountSpec> extraMounts,
    @Nullable String skillName,
    boolean persistent,
    double cpus,
    int memoryMb,
    int pidsLimit,
    boolean readOnlyRootfs,
    int workspaceQuotaMb,
    BoxEgress egress,
    @Nullable String fromSnapshot) {

  /** The image used when a spec names none. */
  public static final String DEFAULT_IMAGE = "rockchin/langbot-sandbox:latest";

  /** Where the workspace is mounted when a spec names no mount path. */
  public static final String DEFAULT_MOUNT_PATH = "/workspace";

  /** Validates every field; see the class comment. */
  public BoxSpec {
    cmd = cmd.strip();
    ModelRules.rejectNul("cmd", cmd);
    ModelRules.argument("cmd", cmd);
    sessionId = sessionId.strip();
    if (sessionId.isEmpty()) {
      throw new BoxValidationException("session_id must not be empty");
    }
    ModelRules.rejectNul("session_id", sessionId);
    workdir = ModelRules.sandboxPath("workdir", workdir);
    mountPath = ModelRules.sandboxPath("mount_path", mountPath);
    if (timeoutSec <= 0) {
      throw new BoxValidationException("timeout_sec must be greater than 0");
    }
    // The limits check themselves, with the messages a spec gives.
    var unused = new BoxLimits(cpus, memoryMb, pidsLimit, readOnlyRootfs, workspaceQuotaMb);
    if (hostPath != null) {
      hostPath = hostPath.isBlank() ? null : ModelRules.hostPath(hostPath);
    }
    skillName = ModelRules.skillName(skillName);
    env.forEach(ModelRules::envEntry);
    ModelRules.envSize(env);
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
    extraMounts = List.copyOf(extraMounts);
    if (hostPath != null
        && hostPathMode != BoxHostMountMode.NONE
        && !ModelRules.isUnder(workdir, mountPath)) {
      throw new BoxValidationException(
          "workdir must stay under mount_path when host_path is provided");
    }
    if (fromSnapshot != null) {
      BoxSnapshot.checkName("from_snapshot", fromSnapshot);
      if (hostPath != null || hostPathMode == BoxHostMountMode.NONE) {
        throw new BoxValidationException(
            "from_snapshot needs a private workspace: it cannot be combined with host_path or"
                + " host_path_mode none");
      }
    }
  }

  /** The resource limits of the session. */
  public BoxLimits limits() {
    return new BoxLimits(cpus, memoryMb, pidsLimit, readOnlyRootfs, workspaceQuotaMb);
  }

  /** A builder with the reference's defaults, for the session {@code sessionId}. */
  public static Builder builder(String sessionId) {
    return new Builder(sessionId);
  }

  /** A builder holding this spec's values. */
  public Builder toBuilder() {
    Builder b = new Builder(sessionId);
    b.cmd = cmd;
    b.workdir = workdir;
    b.timeoutSec = timeoutSec;
    b.network = network;
    b.env = new LinkedHashMap<>(env);
    b.image = image;
    b.hostPath = hostPath;
    b.hostPathMode = hostPathMode;
    b.mountPath = mountPath;
    b.extraMounts = extraMounts;
    b.skillName = skillName;
    b.persistent = persistent;
    b.cpus = cpus;
    b.memoryMb = memoryMb;
    b.pidsLimit = pidsLimit;
    b.readOnlyRootfs = readOnlyRootfs;
    b.workspaceQuotaMb = workspaceQuotaMb;
    b.egress = egress;
    b.fromSnapshot = fromSnapshot;
    return b;
  }

  @JsonCreator
  static BoxSpec fromJson(
      @JsonProperty("cmd") @Nullable String cmd,
      @JsonProperty("workdir") @Nullable String workdir,
      @JsonProperty("timeout_sec") @Nullable Integer timeoutSec,
      @JsonProperty("network") @Nullable BoxNetworkMode network,
      @JsonProperty("session_id") @Nullable String sessionId,
      @JsonProperty("env") @Nullable Map<String, String> env,
      @JsonProperty("image") @Nullable String image,
      @JsonProperty("host_path") @Nullable String hostPath,
      @JsonProperty("host_path_mode") @Nullable BoxHostMountMode hostPathMode,
      @JsonProperty("mount_path") @Nullable String mountPath,
      @JsonProperty("extra_mounts") @Nullable List<BoxMountSpec> extraMounts,
      @JsonProperty("skill_name") @Nullable String skillName,
      @JsonProperty("persistent") @Nullable Boolean persistent,
      @JsonProperty("cpus") @Nullable Double cpus,
      @JsonProperty("memory_mb") @Nullable Integer memoryMb,
      @JsonProperty("pids_limit") @Nullable Integer pidsLimit,
      @JsonProperty("read_only_rootfs") @Nullable Boolean readOnlyRootfs,
      @JsonProperty("workspace_quota_mb") @Nullable Integer workspaceQuotaMb,
      @JsonProperty("egress") @Nullable BoxEgress egress,
      @JsonProperty("from_snapshot") @Nullable String fromSnapshot) {
    Builder b = new Builder(sessionId == null ? "" : sessionId);
    if (cmd != null) b.cmd = cmd;
    if (mountPath != null) b.mountPath = mountPath;
    // As the reference: a missing or empty workdir follows a non-empty mount_path.
    boolean noWorkdir = workdir == null || workdir.isEmpty();
    if (noWorkdir && mountPath != null && !mountPath.isEmpty()) {
      b.workdir = mountPath;
    } else if (workdir != null) {
      b.workdir = workdir;
    }
    if (timeoutSec != null) b.timeoutSec = timeoutSec;
    if (network != null) b.network = network;
    if (env != null) b.env = nonNullEntries(env);
    if (image != null) b.image = image;
    b.hostPath = hostPath;
    if (hostPathMode != null) b.hostPathMode = hostPathMode;
    if (extraMounts != null) b.extraMounts = extraMounts;
    b.skillName = skillName;
    if (persistent != null) b.persistent = persistent;
    if (cpus != null) b.cpus = cpus;
    if (memoryMb != null) b.memoryMb = memoryMb;
    if (pidsLimit != null) b.pidsLimit = pidsLimit;
    if (readOnlyRootfs != null) b.readOnlyRootfs = readOnlyRootfs;
    if (workspaceQuotaMb != null) b.workspaceQuotaMb = workspaceQuotaMb;
    if (egress != null) b.egress = egress;
    b.fromSnapshot = fromSnapshot == null || fromSnapshot.isEmpty() ? null : fromSnapshot;
    return b.build();
  }

  private static Map<String, String> nonNullEntries(Map<String, String> env) {
    Map<String, String> copy = new LinkedHashMap<>();
    env.forEach((k, v) -> copy.put(k, v == null ? "" : v));
    return copy;
  }

  /** Builds a {@link BoxSpec}, starting from the reference's defaults. */
  public static final class Builder {
    private String sessionId;
    private String cmd = "";
    private String workdir = DEFAULT_MOUNT_PATH;
    private int timeoutSec = 30;
    private BoxNetworkMode network = BoxNetworkMode.OFF;
    private Map<String, String> env = new LinkedHashMap<>();
    private String image = DEFAULT_IMAGE;
    private @Nullable String hostPath;
    private BoxHostMountMode hostPathMode = BoxHostMountMode.RW;
    private String mountPath = DEFAULT_MOUNT_PATH;
    private List<BoxMountSpec> extraMounts = List.of();
    private @Nullable String skillName;
    private boolean persistent;
    private double cpus = 1.0;
    private int memoryMb = 512;
    private int pidsLimit = 128;
    private boolean readOnlyRootfs = true;
    private int workspaceQuotaMb;
    private BoxEgress egress = BoxEgress.NONE;
    private @Nullable String fromSnapshot;

    private Builder(String sessionId) {
      this.sessionId = sessionId;
    }

    /** Sets the session id. */
    public Builder sessionId(String value) {
      sessionId = value;
      return this;
    }

    /** Sets the command, run under {@code /bin/sh -c}. */
    public Builder cmd(String value) {
      cmd = value;
      return this;
    }

    /** Sets the working directory inside the sandbox. */
    public Builder workdir(String value) {
      workdir = value;
      return this;
    }

    /** Sets the exec timeout in seconds. */
    public Builder timeoutSec(int value) {
      timeoutSec = value;
      return this;
    }

    /** Sets the network mode. */
    public Builder network(BoxNetworkMode value) {
      network = value;
      return this;
    }

    /** Sets one environment variable. */
    public Builder env(String key, String value) {
      env.put(key, value);
      return this;
    }

    /** Replaces all environment variables. */
    public Builder env(Map<String, String> value) {
      env = new LinkedHashMap<>(value);
      return this;
    }

    /** Sets the image (container backends). */
    public Builder image(String value) {
      image = value;
      return this;
    }

    /** Sets the host directory mounted as the workspace. */
    public Builder hostPath(@Nullable String value) {
      hostPath = value;
      return this;
    }

    /** Sets how the host directory is mounted. */
    public Builder hostPathMode(BoxHostMountMode value) {
      hostPathMode = value;
      return this;
    }

    /** Sets where the workspace appears inside the sandbox. */
    public Builder mountPath(String value) {
      mountPath = value;
      return this;
    }

    /** Sets the extra mounts. */
    public Builder extraMounts(List<BoxMountSpec> value) {
      extraMounts = value;
      return this;
    }

    /** Sets the skill name. */
    public Builder skillName(@Nullable String value) {
      skillName = value;
      return this;
    }

    /** Sets whether the session is exempt from idle reaping. */
    public Builder persistent(boolean value) {
      persistent = value;
      return this;
    }

    /** Sets the CPU quota in cores. */
    public Builder cpus(double value) {
      cpus = value;
      return this;
    }

    /** Sets the memory limit in MiB. */
    public Builder memoryMb(int value) {
      memoryMb = value;
      return this;
    }

    /** Sets the process limit. */
    public Builder pidsLimit(int value) {
      pidsLimit = value;
      return this;
    }

    /** Sets whether the root filesystem is read-only. */
    public Builder readOnlyRootfs(boolean value) {
      readOnlyRootfs = value;
      return this;
    }

    /** Sets the workspace quota in MiB. */
    public Builder workspaceQuotaMb(int value) {
      workspaceQuotaMb = value;
      return this;
    }

    /** Sets the CPU quota, memory and process limits, root file system and workspace quota. */
    public Builder limits(BoxLimits value) {
      cpus = value.cpus();
      memoryMb = value.memoryMb();
      pidsLimit = value.pidsLimit();
      readOnlyRootfs = value.readOnlyRootfs();
      workspaceQuotaMb = value.workspaceQuotaMb();
      return this;
    }

    /** Sets the session's own egress rules. */
    public Builder egress(BoxEgress value) {
      egress = value;
      return this;
    }

    /** Sets the snapshot a new session's private workspace starts from (null: an empty one). */
    public Builder fromSnapshot(@Nullable String value) {
      fromSnapshot = value;
      return this;
    }

    /** Validates and builds the spec; throws {@link BoxValidationException} on a broken rule. */
    public BoxSpec build() {
      return new BoxSpec(
          cmd,
          workdir,
          timeoutSec,
          network,
          sessionId,
          env,
          image,
          hostPath,
          hostPathMode,
          mountPath,
          extraMounts,
          skillName,
          persistent,
          cpus,
          memoryMb,
          pidsLimit,
          readOnlyRootfs,
          workspaceQuotaMb,
          egress,
          fromSnapshot);
    }
  }
}
