package dev.box.langbot;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.backend.BackendStatus;
import dev.box.core.policy.HostPathPolicy;
import dev.box.core.settings.BooleanSetting;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The runtime-owned workspace of grant-enforced mode ({@code box.local.default_workspace}): the
 * strict readiness report built on it, and the shared-volume challenge ({@code
 * box_verify_shared_workspace}) with which LangBot checks that it and Box see the same directory.
 *
 * @param backend the backend in use
 * @param local the {@code box.local} settings in force
 * @param unsafeSoftStorageLimits whether the storage checks are waived ({@code
 *     LANGBOT_BOX_ALLOW_UNSAFE_SOFT_STORAGE_LIMITS})
 * @param mapper builds the answers
 * @param probe the strict isolation probe, run in a real sandbox of the required backend
 */
record ManagedWorkspace(
    Supplier<BackendStatus> backend,
    Supplier<BoxInit.Local> local,
    boolean unsafeSoftStorageLimits,
    ObjectMapper mapper,
    IsolationProbe probe)
    implements Admission.Readiness {
  private static final Pattern PROBE =
      Pattern.compile("^\\.langbot-box-volume-probe-[a-f0-9]{32}$");
  private static final int MAX_PROBE_BYTES = 1024;

  /** The storage checks, which {@code LANGBOT_BOX_ALLOW_UNSAFE_SOFT_STORAGE_LIMITS} waives. */
  private static final List<String> STORAGE_CHECKS =
      List.of(
          "hard_workspace_quota",
          "hard_skill_storage_quota",
          "bounded_ephemeral_storage",
          "inode_quota");

  /** The checks whose proof only the backend and the host can give; none is claimed unproven. */
  private static final List<String> BACKEND_CHECKS =
      Stream.concat(
              Stream.of(
                  "backend_available",
                  "cgroup_v2",
                  "namespace_isolation",
                  "mount_isolation",
                  "network_isolation"),
              STORAGE_CHECKS.stream())
          .toList();

  /** {@code LANGBOT_BOX_ALLOW_UNSAFE_SOFT_STORAGE_LIMITS}: off unless a true word, as LangBot's. */
  private static final BooleanSetting UNSAFE_SOFT_STORAGE_LIMITS =
      new BooleanSetting(false, Set.of("1", "true", "yes", "on"), false);

  /** Whether {@code LANGBOT_BOX_ALLOW_UNSAFE_SOFT_STORAGE_LIMITS} is set to a true word. */
  static boolean unsafeSoftStorageLimits(Map<String, String> env) {
    return UNSAFE_SOFT_STORAGE_LIMITS.parse(
        env.get("LANGBOT_BOX_ALLOW_UNSAFE_SOFT_STORAGE_LIMITS"));
  }

  /**
   * The checks of the reference's grant mode. With the required backend ({@code nsjail}) in use and
   * available, the isolation checks come from {@link IsolationProbe} run in a real jail; the cgroup
   * check from the host; the storage checks hold only with a hard quota for every byte and inode a
   * Workspace can write, which Box does not give a {@code host_path} workspace, so they stay false
   * unless the operator waives them. Any check that was not proven is false and the mode stays
   * closed.
   */
  @Override
  public ObjectNode check(AdmissionPolicy policy, @Nullable String configError) {
    BackendStatus status = backend.get();
    ObjectNode checks = mapper.createObjectNode();
    checks.put("configuration", configError == null);
    checks.put("required_backend", policy.requiredBackend().equals(status.name()));
    String error = configError;
    try {
      root();
      checks.put("workspace_mount", true);
    } catch (ActionError e) {
      checks.put("workspace_mount", false);
      error = error == null ? e.getMessage() : error;
    }
    for (String name : BACKEND_CHECKS) {
      checks.put(name, false);
    }
    ObjectNode details = mapper.createObjectNode();
    if (!policy.requiredBackend().equals(status.name())) {
      error =
          error == null
              ? "grant-enforced mode requires the "
                  + policy.requiredBackend()
                  + " backend; this runtime runs "
                  + status.name()
              : error;
    } else if (status.available()) {
      checks.put("backend_available", true);
      checks.put("cgroup_v2", Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers")));
      IsolationProbe.Result proven = probe.run();
      checks.put("namespace_isolation", proven.namespaces());
      checks.put("mount_isolation", proven.mounts());
      checks.put("network_isolation", proven.network());
      details.put("probe", proven.detail());
      if (unsafeSoftStorageLimits) {
        STORAGE_CHECKS.forEach(name -> checks.put(name, true));
      }
      if (error == null && !checks.path("cgroup_v2").asBoolean()) {
        error = "the host has no cgroup v2 hierarchy at /sys/fs/cgroup";
      }
    } else if (error == null) {
      error = status.name() + " is unavailable: " + status.reason();
    }
    checks.put("session_cap", policy.maxSessions() <= 1);
    checks.put("managed_process_cap", policy.maxManagedProcesses() == 0);
    boolean ready = true;
    for (var check : checks.properties()) {
      ready &= check.getValue().asBoolean();
    }
    ObjectNode report = mapper.createObjectNode();
    report.put("ready", ready);
    report.put("mode", "grant_enforced");
    ObjectNode backendNode = report.putObject("backend");
    backendNode.put("name", status.name());
    backendNode.put("available", checks.path("backend_available").asBoolean());
    backendNode.set("details", details);
    report.set("checks", checks);
    report.put("unsafe_soft_storage_limits", unsafeSoftStorageLimits);
    if (error != null) {
      report.put("error", error);
    }
    return report;
  }

  /**
   * The managed workspace root: configured, inside the allowed mount roots, a writable directory.
   *
   * @throws ActionError {@code BoxReadinessError} with the reference's message otherwise
   */
  Path root() {
    BoxInit.Local current = local.get();
    Path workspace = current.defaultWorkspace();
    if (workspace == null) {
      throw Admission.readinessError(
          "Managed sandbox admission requires box.local.default_workspace");
    }
    Path resolved = HostPathPolicy.resolve(workspace);
    if (current.allowedRoots().stream()
        .map(HostPathPolicy::resolve)
        .noneMatch(resolved::startsWith)) {
      throw Admission.readinessError(
          "Managed sandbox workspace is outside box.local.allowed_mount_roots");
    }
    if (!Files.isDirectory(resolved)) {
      throw Admission.readinessError("Managed sandbox workspace path is not a directory");
    }
    if (!Files.isReadable(resolved) || !Files.isWritable(resolved)) {
      throw Admission.readinessError("Managed sandbox workspace path is not writable");
    }
    return resolved;
  }

  /**
   * Digests the marker LangBot created in the managed workspace root. Only an opaque basename of
   * one narrow shape is accepted, never a path, and the marker is never followed if it is a link.
   *
   * @return {@code {marker_name, sha256, size}}
   * @throws ActionError {@code BoxReadinessError} with the reason
   */
  ObjectNode verify(String markerName) {
    String name = markerName.strip();
    if (!PROBE.matcher(name).matches()) {
      throw Admission.readinessError("Invalid Box shared Workspace probe basename");
    }
    Path marker = root().resolve(name);
    BasicFileAttributes attributes;
    try {
      attributes =
          Files.readAttributes(marker, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      throw Admission.readinessError("Box Runtime cannot read the Core shared Workspace probe");
    }
    if (!attributes.isRegularFile()) {
      throw Admission.readinessError("Box shared Workspace probe is not a regular file");
    }
    if (attributes.size() <= 0 || attributes.size() > MAX_PROBE_BYTES) {
      throw Admission.readinessError("Box shared Workspace probe has an invalid size");
    }
    byte[] content;
    // NOFOLLOW_LINKS opens with O_NOFOLLOW: a link swapped in after the check is refused too.
    try (InputStream in = Files.newInputStream(marker, LinkOption.NOFOLLOW_LINKS)) {
      content = in.readNBytes(MAX_PROBE_BYTES + 1);
    } catch (IOException e) {
      throw Admission.readinessError("Box Runtime cannot read the Core shared Workspace probe");
    }
    if (content.length > MAX_PROBE_BYTES) {
      throw Admission.readinessError("Box shared Workspace probe exceeds the size limit");
    }
    if (content.length != attributes.size()) {
      throw Admission.readinessError("Box shared Workspace probe changed while being verified");
    }
    ObjectNode answer = mapper.createObjectNode();
    answer.put("marker_name", name);
    answer.put("sha256", sha256(content));
    answer.put("size", content.length);
    return answer;
  }

  private static String sha256(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this Java runtime", e);
    }
  }
}
