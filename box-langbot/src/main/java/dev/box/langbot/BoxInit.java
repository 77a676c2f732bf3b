package dev.box.langbot;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxProfile;
import dev.box.api.BoxValidationException;
import dev.box.core.RuntimeConfig;
import dev.box.core.policy.HostPathPolicy;
import dev.box.core.session.SessionManager;
import dev.box.core.settings.IntSetting;
import dev.box.core.settings.RuntimeLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LangBot's {@code box} config section applied to the running runtime ({@code box_init} and {@code
 * LANGBOT_BOX_CONFIG}): the section is merged key by key into the current one, and {@code limits}
 * and {@code local} are validated as a whole before any is applied, so an invalid section changes
 * nothing.
 */
final class BoxInit {
  private static final Logger log = LoggerFactory.getLogger(BoxInit.class);

  /**
   * The {@code box.limits} LangBot sets, with the defaults, ranges and messages of {@link
   * RuntimeLimits}.
   */
  record Limits(
      int maxSessions,
      int maxManagedProcesses,
      int maxCompletedProcesses,
      int maxAdmissionRecords,
      int maxRpcFileBytes,
      int completedProcessRetentionSec) {

    /** The keys of a {@code limits} section, as {@link #read} reads them. */
    static final Set<String> KEYS =
        Set.of(
            RuntimeLimits.MAX_SESSIONS.key(),
            RuntimeLimits.MAX_MANAGED_PROCESSES.key(),
            RuntimeLimits.MAX_COMPLETED_PROCESSES.key(),
            RuntimeLimits.MAX_ADMISSION_RECORDS.key(),
            RuntimeLimits.MAX_RPC_FILE_BYTES.key(),
            RuntimeLimits.COMPLETED_PROCESS_RETENTION_SEC.key());

    /** Reads a {@code limits} section; a key it leaves out takes the table's default. */
    static Limits read(JsonNode limits) {
      return new Limits(
          value(limits, RuntimeLimits.MAX_SESSIONS),
          value(limits, RuntimeLimits.MAX_MANAGED_PROCESSES),
          value(limits, RuntimeLimits.MAX_COMPLETED_PROCESSES),
          value(limits, RuntimeLimits.MAX_ADMISSION_RECORDS),
          value(limits, RuntimeLimits.MAX_RPC_FILE_BYTES),
          value(limits, RuntimeLimits.COMPLETED_PROCESS_RETENTION_SEC));
    }

    /** An integral JSON number in range: a string, a boolean or a fraction is not one. */
    private static int value(JsonNode limits, IntSetting limit) {
      String name = "box.limits." + limit.key();
      JsonNode node = limits.get(limit.key());
      if (node == null || node.isNull()) {
        return limit.defaultValue();
      }
      if (!node.isIntegralNumber() || !node.canConvertToInt()) {
        throw new BoxValidationException(limit.notAnInteger(name));
      }
      if (!limit.allows(node.asInt())) {
        throw new BoxValidationException(limit.outOfRange(name));
      }
      return node.asInt();
    }
  }

  /**
   * The {@code box.local} keys this runtime applies, resolved as LangBot's own Box runtime resolves
   * them when it ensures the default workspace on the runtime host.
   *
   * @param hostRoot {@code host_root} relative to the working directory, or null when empty
   * @param defaultWorkspace {@code default_workspace} under the host root ({@code
   *     <host_root>/default} when empty), or null when both are empty
   * @param allowedRoots {@code allowed_mount_roots} relative to the working directory; {@code
   *     [host_root]} when empty
   * @param rootsConfigured whether the section names a host root or allowed roots, so that the
   *     runtime's host-path policy is replaced
   * @param profile the built-in profile applied to exec and session specs, or null for none
   * @param image the image for requests that name none, or null
   * @param skillsRoot {@code skills_root} (default {@code skills}) under the host root, or under
   *     the working directory when no host root is given; null when the section names neither
   */
  record Local(
      @Nullable Path hostRoot,
      @Nullable Path defaultWorkspace,
      List<Path> allowedRoots,
      boolean rootsConfigured,
      @Nullable BoxProfile profile,
      @Nullable String image,
      @Nullable Path skillsRoot) {

    static final Local NONE = new Local(null, null, List.of(), false, null, null, null);

    Local {
      allowedRoots = List.copyOf(allowedRoots);
    }

    static Local read(JsonNode local, Path workingDir) {
      if (!local.isObject()) {
        throw new BoxValidationException("box.local must be an object");
      }
      String root = text(local, "host_root");
      Path hostRoot = root == null ? null : workingDir.resolve(root).normalize();
      String workspace = text(local, "default_workspace");
      Path defaultWorkspace;
      if (workspace != null) {
        defaultWorkspace =
            (hostRoot != null ? hostRoot : workingDir).resolve(workspace).normalize();
      } else {
        defaultWorkspace = hostRoot == null ? null : hostRoot.resolve("default");
      }
      List<Path> roots = new ArrayList<>();
      for (String entry : roots(local.get("allowed_mount_roots"))) {
        roots.add(workingDir.resolve(entry).normalize());
      }
      if (roots.isEmpty() && hostRoot != null) {
        roots.add(hostRoot);
      }
      boolean configured = hostRoot != null || isSet(local.get("allowed_mount_roots"));
      String profileName = text(local, "profile");
      BoxProfile profile = profileName == null ? null : BoxProfile.named(profileName);
      String skills = text(local, "skills_root");
      Path skillsRoot =
          skills == null && hostRoot == null
              ? null
              : (hostRoot != null ? hostRoot : workingDir)
                  .resolve(skills == null ? "skills" : skills)
                  .normalize();
      return new Local(
          hostRoot, defaultWorkspace, roots, configured, profile, text(local, "image"), skillsRoot);
    }

    private static boolean isSet(@Nullable JsonNode node) {
      return node != null && !node.isNull();
    }

    private static @Nullable String text(JsonNode local, String key) {
      JsonNode node = local.get(key);
      if (node == null || node.isNull()) {
        return null;
      }
      if (!node.isTextual()) {
        throw new BoxValidationException("box.local." + key + " must be a string");
      }
      String value = node.asText().strip();
      return value.isEmpty() ? null : value;
    }

    /** A list of strings or one comma-separated string, blank entries dropped. */
    private static List<String> roots(@Nullable JsonNode node) {
      List<String> entries = new ArrayList<>();
      if (node == null || node.isNull()) {
        return entries;
      }
      if (node.isTextual()) {
        entries.addAll(List.of(node.asText().split(",", -1)));
      } else if (node.isArray()) {
        for (JsonNode item : node) {
          if (!item.isTextual()) {
            throw new BoxValidationException(
                "box.local.allowed_mount_roots must be a list of paths or a comma-separated"
                    + " string");
          }
          entries.add(item.asText());
        }
      } else {
        throw new BoxValidationException(
            "box.local.allowed_mount_roots must be a list of paths or a comma-separated string");
      }
      return entries.stream().map(String::strip).filter(e -> !e.isEmpty()).toList();
    }

    /**
     * Creates the default workspace when it is missing and under an allowed root, with the
     * reference's messages otherwise.
     */
    /**
     * The default workspace, when it lies in an allowed root: the runtime owns it, as LangBot's own
     * runtime does, so the directories LangBot makes in it (as whatever user LangBot runs as) are
     * handed to the sandbox user when they are mounted read-write.
     */
    List<Path> managedRoots() {
      if (defaultWorkspace == null) {
        return List.of();
      }
      Path real = HostPathPolicy.resolve(defaultWorkspace);
      return allowedRoots.stream().map(HostPathPolicy::resolve).anyMatch(real::startsWith)
          ? List.of(real)
          : List.of();
    }

    void ensureDefaultWorkspace() {
      if (defaultWorkspace == null) {
        return;
      }
      String notADirectory =
          "box.local.default_workspace must point to a directory on the Box runtime host";
      if (Files.exists(defaultWorkspace)) {
        if (!Files.isDirectory(defaultWorkspace)) {
          throw new BoxValidationException(notADirectory);
        }
        return;
      }
      if (allowedRoots.isEmpty()) {
        throw new BoxValidationException(
            "box.local.default_workspace cannot be created because no allowed_mount_roots are"
                + " configured");
      }
      Path real = HostPathPolicy.resolve(defaultWorkspace);
      if (allowedRoots.stream().map(HostPathPolicy::resolve).noneMatch(real::startsWith)) {
        throw new BoxValidationException(
            "box.local.default_workspace is outside allowed_mount_roots: "
                + allowedRoots.stream().map(Path::toString).collect(Collectors.joining(", ")));
      }
      try {
        Files.createDirectories(defaultWorkspace);
      } catch (IOException e) {
        throw new BoxValidationException(notADirectory);
      }
    }
  }

  /** The top-level keys this runtime applies. */
  private static final Set<String> APPLIED = Set.of("backend", "limits", "admission", "local");

  /** Keys LangBot sends that its own side applies, so the runtime has nothing to do for them. */
  private static final Map<String, String> LANGBOT_SIDE =
      Map.of(
          "enabled", "LangBot's own switch",
          "default_memory_mb", "LangBot puts it in the specs of the sessions it starts");

  /** The {@code box.local} keys this runtime applies. */
  private static final Set<String> LOCAL_KEYS =
      Set.of(
          "profile",
          "image",
          "host_root",
          "default_workspace",
          "allowed_mount_roots",
          "skills_root");

  private final ActionServices services;
  private final SessionManager sessions;
  private final ObjectMapper mapper;
  private final Path workingDir;
  private ObjectNode config;
  private volatile Limits limits;
  private volatile Local local = Local.NONE;

  BoxInit(ActionServices services) {
    this(services, Path.of("").toAbsolutePath());
  }

  /** An init that resolves relative {@code box.local} paths against {@code workingDir}. */
  BoxInit(ActionServices services, Path workingDir) {
    this.services = services;
    this.sessions = services.sessions();
    this.mapper = services.mapper();
    this.workingDir = workingDir;
    this.config = mapper.createObjectNode();
    RuntimeConfig current = sessions.config();
    this.limits =
        new Limits(
            current.maxSessions(),
            current.processes().maxRunning(),
            current.processes().maxCompleted(),
            Tenancy.DEFAULT_MAX_RECORDS,
            RuntimeLimits.MAX_RPC_FILE_BYTES.defaultValue(),
            (int) current.processes().completedRetention().toSeconds());
  }

  /** The limits in force. */
  Limits limits() {
    return limits;
  }

  /** The {@code box.local} settings in force. */
  Local local() {
    return local;
  }

  /**
   * Merges {@code section} into the current config and applies it.
   *
   * @return the keys of {@code section} this runtime does not apply, each with the reason (also
   *     logged): a setting is never accepted and silently ignored
   * @throws BoxValidationException with the reference's message when a limit or a {@code local} key
   *     is invalid, or the default workspace cannot be ensured; nothing is applied then
   */
  synchronized Map<String, String> apply(JsonNode section) {
    if (!section.isObject()) {
      throw new BoxValidationException("box config must be an object");
    }
    ObjectNode merged = config.deepCopy();
    for (Map.Entry<String, JsonNode> entry : section.properties()) {
      if (!entry.getKey().equals("runtime")) {
        merged.set(entry.getKey(), entry.getValue());
      }
    }
    JsonNode limitsNode = merged.get("limits");
    Limits next = limitsNode != null && limitsNode.isObject() ? Limits.read(limitsNode) : limits;
    JsonNode localNode = merged.get("local");
    Local nextLocal =
        localNode == null || localNode.isNull() ? local : Local.read(localNode, workingDir);
    nextLocal.ensureDefaultWorkspace();
    String backend = section.path("backend").asText("").strip();
    if (!backend.isEmpty()) {
      switchBackend(backend);
    }
    // The backend's own section (box.docker, ...): it validates before the rest is applied.
    JsonNode own = merged.path(sessions.backendStatus().name());
    if (own.isObject()) {
      sessions.configureBackend(
          mapper.convertValue(own, new TypeReference<Map<String, Object>>() {}));
    }
    config = merged;
    limits = next;
    if (nextLocal.rootsConfigured()) {
      sessions.applyAllowedMountRoots(nextLocal.allowedRoots(), nextLocal.managedRoots());
    }
    local = nextLocal;
    RuntimeConfig.ProcessLimits current = sessions.config().processes();
    sessions.applyLimits(
        next.maxSessions(),
        new RuntimeConfig.ProcessLimits(
            next.maxManagedProcesses(),
            next.maxCompletedProcesses(),
            Duration.ofSeconds(next.completedProcessRetentionSec()),
            current.stdoutBufferBytes()));
    services.tenancy().maxRecords(next.maxAdmissionRecords());
    services.admission().maxRecords(next.maxAdmissionRecords());
    services.admission().configure(merged.get("admission"));
    log.info("applied LangBot box config: limits {}, local {}", next, nextLocal);
    Map<String, String> notApplied = notApplied(section);
    notApplied.forEach((key, why) -> log.warn("box.{} is not applied by Box: {}", key, why));
    return notApplied;
  }

  /** The keys of {@code section} no part of this runtime applies, with the reason. */
  private Map<String, String> notApplied(JsonNode section) {
    Map<String, String> result = new TreeMap<>();
    String backend = sessions.backendStatus().name();
    for (Map.Entry<String, JsonNode> entry : section.properties()) {
      String key = entry.getKey();
      if (APPLIED.contains(key) || key.equals("runtime") || key.equals(backend)) {
        continue;
      }
      String why = LANGBOT_SIDE.get(key);
      if (why != null) {
        result.put(key, why);
      } else if (Set.of("docker", "podman", "nsjail", "e2b").contains(key)) {
        result.put(key, "the settings of a backend this runtime is not using (" + backend + ")");
      } else {
        result.put(key, "unknown key");
      }
    }
    JsonNode limitsNode = section.get("limits");
    if (limitsNode != null && limitsNode.isObject()) {
      for (String key : limitsNode.propertyStream().map(Map.Entry::getKey).toList()) {
        if (!Limits.KEYS.contains(key)) {
          result.put(
              "limits." + key,
              key.equals("max_workspace_entries")
                  ? "LangBot's own limit on the file tools"
                  : "unknown key");
        }
      }
    }
    JsonNode localNode = section.get("local");
    if (localNode != null && localNode.isObject()) {
      for (Map.Entry<String, JsonNode> entry : localNode.properties()) {
        String key = entry.getKey();
        if (key.equals("workspace_quota_mb")) {
          if (!entry.getValue().isNull()) {
            result.put(
                "local.workspace_quota_mb",
                "workspace quotas are not enforced by this runtime: nothing bounds a workspace");
          }
        } else if (!LOCAL_KEYS.contains(key)) {
          result.put("local." + key, "unknown key");
        }
      }
    }
    return result;
  }

  /**
   * Re-selects the backend as LangBot's runtime does on {@code box_init}: while no session exists,
   * unless the operator named the backend when starting Box.
   */
  private void switchBackend(String name) {
    String running = sessions.backendStatus().name();
    switch (sessions.switchBackend(name)) {
      case DONE -> {}
      case FIXED -> {
        if (!name.equals(running) && !name.equals("local")) {
          log.warn(
              "box.backend={} differs from the backend Box was started with; sandboxes keep using"
                  + " {} (box serve --backend or BOX_BACKEND)",
              name,
              running);
        }
      }
      case BUSY ->
          log.warn(
              "box.backend={} applies once no session exists; sandboxes keep using {} for now",
              name,
              running);
    }
  }
}
