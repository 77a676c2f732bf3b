package dev.box.core.session;

import dev.box.api.BoxHostMountMode;
import dev.box.api.BoxMountSpec;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionState;
import dev.box.api.BoxSpec;
import dev.box.core.backend.Sandbox;
import dev.box.core.backend.SandboxProcess;
import dev.box.core.process.ManagedProcess;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/** One live session: the spec it was created from, its sandbox, and how it is being used. */
final class Session {
  private final BoxSpec template;
  private final Placement placement;
  private final Instant createdAt;
  private final AtomicInteger activeExecs = new AtomicInteger();
  private final ConcurrentHashMap<String, ManagedProcess> processes = new ConcurrentHashMap<>();
  private final Set<SandboxProcess> spawned = ConcurrentHashMap.newKeySet();
  private volatile Instant lastUsedAt;
  private volatile boolean closing;
  private volatile @Nullable Instant pausedAt;

  Session(BoxSpec template, Placement placement, Instant now) {
    this.template = template;
    this.placement = placement;
    this.createdAt = now;
    this.lastUsedAt = now;
  }

  String id() {
    return template.sessionId();
  }

  Sandbox sandbox() {
    return placement.sandbox();
  }

  BoxSpec template() {
    return template;
  }

  @Nullable Path privateWorkspace() {
    return placement.privateWorkspace();
  }

  /** The name of the backend that started the session's sandbox. */
  String backend() {
    return placement.backend();
  }

  boolean persistent() {
    return template.persistent();
  }

  Instant createdAt() {
    return createdAt;
  }

  /** When the session was paused, or null while it runs. */
  @Nullable Instant pausedAt() {
    return pausedAt;
  }

  /** Records that the session is paused since {@code since}, or runs when null. */
  void pausedSince(@Nullable Instant since) {
    pausedAt = since;
  }

  Instant lastUsedAt() {
    return lastUsedAt;
  }

  void touch(Instant now) {
    lastUsedAt = now;
  }

  /** The managed processes, running and exited, by process id. */
  ConcurrentHashMap<String, ManagedProcess> processes() {
    return processes;
  }

  /** The running processes spawned for callers that relay them ({@link ProcessManager#spawn}). */
  Set<SandboxProcess> spawned() {
    return spawned;
  }

  boolean hasRunningProcess() {
    return !spawned.isEmpty() || processes.values().stream().anyMatch(ManagedProcess::isRunning);
  }

  boolean closing() {
    return closing;
  }

  void markClosing() {
    closing = true;
  }

  int activeExecs() {
    return activeExecs.get();
  }

  void execStarted() {
    activeExecs.incrementAndGet();
  }

  void execEnded() {
    activeExecs.decrementAndGet();
  }

  /**
   * The first compared field whose value differs between this session and {@code spec}, rendered as
   * {@code field=existing value}, or null when they are compatible.
   */
  @Nullable String conflictWith(BoxSpec spec) {
    Map<String, Object> mine = comparedFields(template);
    Map<String, Object> theirs = comparedFields(spec);
    for (Map.Entry<String, Object> field : mine.entrySet()) {
      if (!Objects.equals(field.getValue(), theirs.get(field.getKey()))) {
        return field.getKey() + "=" + field.getValue();
      }
    }
    return null;
  }

  /** Whether {@code spec} asks for another set of extra mounts, which needs a new sandbox. */
  boolean mountsDifferFrom(BoxSpec spec) {
    return !mountSignature(template).equals(mountSignature(spec));
  }

  private static Map<String, Object> comparedFields(BoxSpec spec) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("network", spec.network().wireName());
    fields.put("image", spec.image());
    fields.put("host_path", spec.hostPath() == null ? "None" : spec.hostPath());
    fields.put("host_path_mode", spec.hostPathMode().wireName());
    fields.put("mount_path", spec.mountPath());
    fields.put("persistent", spec.persistent() ? "True" : "False");
    fields.put("cpus", spec.cpus());
    fields.put("memory_mb", spec.memoryMb());
    fields.put("pids_limit", spec.pidsLimit());
    fields.put("read_only_rootfs", spec.readOnlyRootfs() ? "True" : "False");
    fields.put("workspace_quota_mb", spec.workspaceQuotaMb());
    fields.put("egress", spec.egress().isEmpty() ? "None" : spec.egress().toString());
    return fields;
  }

  private static Set<String> mountSignature(BoxSpec spec) {
    return spec.extraMounts().stream()
        .filter(m -> m.mode() != BoxHostMountMode.NONE)
        .map(Session::mountKey)
        .collect(Collectors.toSet());
  }

  private static String mountKey(BoxMountSpec m) {
    return m.hostPath() + "\0" + m.mountPath() + "\0" + m.mode().wireName();
  }

  BoxSessionInfo info() {
    return info(
        template,
        placement.backend(),
        placement.sandbox().id(),
        createdAt,
        lastUsedAt,
        pausedAt != null ? BoxSessionState.PAUSED : BoxSessionState.RUNNING);
  }

  /** What the API says of a session of {@code template} in sandbox {@code sandboxId}. */
  static BoxSessionInfo info(
      BoxSpec template,
      String backend,
      String sandboxId,
      Instant createdAt,
      Instant lastUsedAt,
      BoxSessionState state) {
    return new BoxSessionInfo(
        template.sessionId(),
        backend,
        sandboxId,
        template.image(),
        template.network(),
        template.hostPath(),
        template.hostPathMode(),
        template.mountPath(),
        template.persistent(),
        template.cpus(),
        template.memoryMb(),
        template.pidsLimit(),
        template.readOnlyRootfs(),
        template.workspaceQuotaMb(),
        createdAt,
        lastUsedAt,
        state);
  }
}
