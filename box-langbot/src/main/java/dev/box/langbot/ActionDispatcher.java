package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxException;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxProfile;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSpec;
import dev.box.core.backend.BackendStatus;
import dev.box.core.session.SessionManager;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The actions LangBot sends over its control channel ({@code box_exec}, {@code box_create_session},
 * ...), carried out with {@link SessionManager}: host-control actions need only an authenticated
 * connection; tenant actions need a context of the trusted instance, pass the generation fence, and
 * see logical session ids while the core sees physical ones.
 */
public final class ActionDispatcher implements ActionHandler {
  private static final Logger log = LoggerFactory.getLogger(ActionDispatcher.class);

  /** The directory under the data dir that holds skills when LangBot names no skills root. */
  public static final String SKILLS_DIR = "skills";

  /** The directory under the state dir that holds the files of {@code __file_chunk}. */
  public static final String RPC_FILES_DIR = "rpc-files";

  /** The host-control actions: an authenticated connection is all they need. */
  private static final List<String> HOST_ACTIONS =
      List.of(
          "__ping",
          "__file_chunk",
          "box_init",
          "box_health",
          "box_get_backend_info",
          "box_upsert_sandbox_admission_grant",
          "box_revoke_sandbox_admission_grant",
          "box_verify_shared_workspace",
          "box_shutdown");

  /** The tenant actions: they need a trusted context and see logical session ids. */
  private static final List<String> TENANT_ACTIONS =
      List.of(
          "box_status",
          "box_exec",
          "box_create_session",
          "box_get_session",
          "box_get_sessions",
          "box_delete_session",
          "box_start_managed_process",
          "box_get_managed_process",
          "box_stop_managed_process");

  /**
   * Every action this dispatcher serves, in a fixed order: the host-control actions, the tenant
   * actions, then the skill actions. Any other name is answered {@code BoxError: unknown action}.
   */
  public static final List<String> ACTIONS =
      Stream.of(HOST_ACTIONS, TENANT_ACTIONS, SkillActions.ACTIONS).flatMap(List::stream).toList();

  private final SessionManager sessions;
  private final Tenancy tenancy;
  private final ControlAuth auth;
  private final ObjectMapper mapper;
  private final BoxInit init;
  private final RpcFiles files;
  private final Admission admission;
  private final ManagedWorkspace managedWorkspace;
  private final SkillActions skills;
  private final Path dataDir;

  /**
   * A dispatcher over {@code sessions}, fenced by {@code tenancy}, trusting {@code auth}, with its
   * default skills root under the runtime's data dir.
   *
   * @param unsafeSoftStorageLimits whether grant-enforced mode's storage checks are waived ({@code
   *     LANGBOT_BOX_ALLOW_UNSAFE_SOFT_STORAGE_LIMITS})
   * @param dataDir the runtime's data dir, whose {@code skills} directory is the skills root when
   *     LangBot names none
   */
  public ActionDispatcher(
      SessionManager sessions,
      Tenancy tenancy,
      ControlAuth auth,
      ObjectMapper mapper,
      boolean unsafeSoftStorageLimits,
      Path dataDir) {
    this(
        sessions, tenancy, auth, mapper, unsafeSoftStorageLimits, dataDir, Clock.systemUTC(), null);
  }

  /**
   * A dispatcher with its clock and, for tests of grant-enforced mode on a host where it cannot be
   * ready, a readiness of the caller's (null: the real one).
   */
  ActionDispatcher(
      SessionManager sessions,
      Tenancy tenancy,
      ControlAuth auth,
      ObjectMapper mapper,
      boolean unsafeSoftStorageLimits,
      Path dataDir,
      Clock clock,
      Admission.@Nullable Readiness readiness) {
    this.sessions = sessions;
    this.dataDir = dataDir;
    this.tenancy = tenancy;
    this.auth = auth;
    this.mapper = mapper;
    this.managedWorkspace =
        new ManagedWorkspace(
            sessions::backendStatus,
            this::local,
            unsafeSoftStorageLimits,
            mapper,
            new IsolationProbe(sessions::exec, sessions::delete, sessions.config().dataDir()));
    this.admission = new Admission(clock, readiness != null ? readiness : managedWorkspace, mapper);
    this.init = new BoxInit(sessions, tenancy, admission, mapper);
    this.files =
        new RpcFiles(
            sessions.config().dataDir().resolve(RPC_FILES_DIR),
            () -> init.limits().maxRpcFileBytes());
    this.skills =
        new SkillActions(
            this::skillsRoot,
            real -> {
              if (init.local().skillsRoot() != null) {
                sessions.hostPathPolicy().check(real.toString(), false);
              }
            },
            files,
            mapper);
  }

  /**
   * Where skills live: LangBot's {@code box.local.skills_root}, else {@code skills} under the data
   * dir. A root LangBot configured is a host path of the operator's, so what LangBot names in it
   * answers to the host-path policy; Box's own default root does not.
   */
  private Path skillsRoot() {
    Path configured = init.local().skillsRoot();
    return configured != null ? configured : dataDir.resolve(SKILLS_DIR);
  }

  /** Applies LangBot's {@code box} config section, as {@code box_init} does. */
  public void applyConfig(JsonNode section) {
    init.apply(section);
  }

  private BoxInit.Local local() {
    return init.local();
  }

  /** The package of the Workspace's skill {@code name}, or null when it has none of that name. */
  private @Nullable Path skillPackage(ActionContext context, String name) {
    try {
      Skill skill =
          new SkillStore(
                  skills.skillsRoot(),
                  Tenancy.namespace(context.instanceUuid(), context.workspaceUuid()))
              .get(name);
      return skill == null ? null : skill.packageRoot();
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Whether grant-enforced mode is on ({@code box.admission.required}). */
  public boolean admissionRequired() {
    return admission.required();
  }

  /** The readiness report of grant-enforced mode, or null when it is off. */
  public @Nullable ObjectNode admissionReadiness() {
    return admission.required() ? admission.readiness() : null;
  }

  /** Ends the sessions of Workspaces whose grants expired; run by the server's reaper. */
  public void reapExpiredGrants() {
    if (admission.required()) {
      dropSessions(admission.reapExpired());
    }
  }

  @Override
  public JsonNode handle(String action, JsonNode data, @Nullable JsonNode context)
      throws Exception {
    JsonNode host = host(action, data);
    if (host != null) {
      return host;
    }
    if (!ACTIONS.contains(action)) {
      throw new ActionError("BoxError", "unknown action " + action);
    }
    ActionContext tenant = trustedContext(context);
    if (admission.required()) {
      reapExpiredGrants();
      if (isSandboxAction(action)) {
        admission.require(tenant);
      }
    }
    tenancy.observe(tenant);
    Tenant view =
        new Tenant(tenant, admission.required() ? admission.policy().logicalSessionId() : null);
    JsonNode result;
    try {
      result = tenantAction(action, data, view);
    } catch (ActionError e) {
      throw e;
    } catch (BoxException e) {
      throw new ActionError(
          e.code(),
          ErrorRendering.className(e.code()),
          view.toLogicalText(String.valueOf(e.getMessage())));
    }
    tenancy.requireCurrent(tenant);
    view.toLogical(result);
    return result;
  }

  private @Nullable JsonNode host(String action, JsonNode data) throws IOException {
    return switch (action) {
      case "__ping" -> mapper.createObjectNode();
      case "__file_chunk" -> {
        files.receive(data);
        yield mapper.createObjectNode();
      }
      case "box_init" -> {
        Map<String, String> notApplied = init.apply(data);
        ObjectNode answer = mapper.createObjectNode().put("initialized", true);
        if (!notApplied.isEmpty()) {
          answer.set("not_applied", mapper.valueToTree(notApplied));
        }
        yield answer;
      }
      case "box_health" -> {
        if (!admission.required()) {
          yield backend();
        }
        ObjectNode readiness = admission.readiness();
        if (!readiness.path("ready").asBoolean(false)) {
          throw Admission.readinessError("managed sandbox isolation is not ready");
        }
        yield readiness;
      }
      case "box_get_backend_info" -> {
        if (!admission.required()) {
          yield backend();
        }
        ObjectNode readiness = admission.readiness();
        ObjectNode info = mapper.createObjectNode();
        info.set("name", readiness.path("backend").path("name"));
        info.put("available", readiness.path("ready").asBoolean(false));
        info.set("readiness", readiness);
        yield info;
      }
      case "box_upsert_sandbox_admission_grant" -> {
        List<ActionContext> drop = new ArrayList<>();
        ObjectNode answer = admission.upsert(data, auth::isTrusted, drop);
        dropSessions(drop);
        tenancy.observe(
            new ActionContext(
                data.path("instance_uuid").asText().strip(),
                answer.path("workspace_uuid").asText(),
                answer.path("execution_generation").asLong(),
                null));
        yield answer;
      }
      case "box_revoke_sandbox_admission_grant" -> {
        List<ActionContext> drop = new ArrayList<>();
        ObjectNode answer = admission.revoke(data, auth::isTrusted, drop);
        dropSessions(drop);
        yield answer;
      }
      case "box_verify_shared_workspace" -> {
        JsonNode marker = data.get("marker_name");
        yield managedWorkspace.verify(marker != null && marker.isTextual() ? marker.asText() : "");
      }
      case "box_shutdown" -> {
        shutdownSessions();
        yield mapper.createObjectNode();
      }
      default -> null;
    };
  }

  /** The actions that touch sandboxes, which grant-enforced mode admits one by one. */
  private static boolean isSandboxAction(String action) {
    return !action.equals("box_status") && isTenantAction(action);
  }

  private void dropSessions(List<ActionContext> workspaces) {
    for (ActionContext workspace : workspaces) {
      for (BoxSessionInfo session : tenancy.sessionsOf(workspace)) {
        try {
          sessions.delete(session.sessionId());
        } catch (BoxException e) {
          log.debug("session {} was gone before its grant ended", session.sessionId());
        }
      }
    }
  }

  private static boolean isTenantAction(String action) {
    return TENANT_ACTIONS.contains(action);
  }

  private JsonNode tenantAction(String action, JsonNode data, Tenant tenant) throws Exception {
    return switch (action) {
      case "box_status" -> status(tenant);
      case "box_exec" -> stripped(mapper.valueToTree(sessions.exec(spec(data, tenant))));
      case "box_create_session" ->
          mapper.valueToTree(sessions.createOrReuse(spec(data, tenant)).info());
      case "box_get_session" -> session(tenant.physical(required(data, "session_id")));
      case "box_get_sessions" -> {
        ObjectNode result = mapper.createObjectNode();
        result.set("sessions", mapper.valueToTree(tenancy.sessionsOf(tenant.context)));
        yield result;
      }
      case "box_delete_session" -> {
        String logical = required(data, "session_id");
        sessions.delete(tenant.physical(logical));
        yield mapper.createObjectNode().put("deleted", logical);
      }
      case "box_start_managed_process" -> {
        String physical = tenant.physical(required(data, "session_id"));
        if (admission.required()) {
          // The policy caps managed processes at 0 and every grant within it.
          throw Admission.admissionError(
              "Sandbox admission grant does not permit managed processes");
        }
        JsonNode spec = data.path("spec");
        if (spec.isMissingNode()) {
          throw ActionError.missingKey("spec");
        }
        yield mapper.valueToTree(
            sessions
                .processes()
                .start(physical, mapper.treeToValue(spec, BoxManagedProcessSpec.class)));
      }
      case "box_get_managed_process" ->
          mapper.valueToTree(
              sessions
                  .processes()
                  .get(tenant.physical(required(data, "session_id")), processId(data)));
      case "box_stop_managed_process" -> {
        String processId = processId(data);
        sessions.processes().stop(tenant.physical(required(data, "session_id")), processId);
        yield mapper.createObjectNode().put("stopped", processId);
      }
      default -> {
        if (SkillActions.ACTIONS.contains(action)) {
          yield skills.handle(action, data, tenant.context);
        }
        throw new ActionError("BoxError", "unknown action " + action);
      }
    };
  }

  private ActionContext trustedContext(@Nullable JsonNode context) {
    if (context == null || context.isNull() || context.isMissingNode()) {
      throw ActionError.permission("Box tenant action requires a trusted Workspace context");
    }
    ActionContext parsed = ActionContext.fromJson(context);
    if (!auth.isTrusted(parsed.instanceUuid())) {
      throw ActionError.permission("Box action context does not match the trusted instance");
    }
    return parsed;
  }

  private BoxSpec spec(JsonNode data, Tenant tenant) throws Exception {
    if (!(data instanceof ObjectNode object)) {
      throw new ActionError("BoxValidationError", "data must be an object");
    }
    ObjectNode copy = object.deepCopy();
    if (admission.required()) {
      copy.put("session_id", admission.policy().logicalSessionId());
      return AdmittedSpec.normalize(
          mapper.treeToValue(copy, BoxSpec.class),
          tenant.context,
          admission.policy(),
          managedWorkspace.root(),
          name -> skillPackage(tenant.context, name));
    }
    copy.put("session_id", tenant.physical(required(data, "session_id")));
    skills.confineMounts(copy, tenant.context);
    BoxInit.Local local = init.local();
    JsonNode image = copy.get("image");
    String configuredImage = local.image();
    if (configuredImage != null && (image == null || image.isNull() || image.asText().isBlank())) {
      copy.put("image", configuredImage);
    }
    BoxSpec spec = mapper.treeToValue(copy, BoxSpec.class);
    BoxProfile profile = local.profile();
    return profile == null ? spec : profile.apply(spec);
  }

  /**
   * LangBot's own Box runtime strips both streams of an exec result, and LangBot relies on it;
   * Box's REST API does not strip.
   */
  private static ObjectNode stripped(ObjectNode result) {
    for (String stream : List.of("stdout", "stderr")) {
      JsonNode text = result.get(stream);
      if (text != null && text.isTextual()) {
        result.put(stream, text.asText().strip());
      }
    }
    return result;
  }

  private JsonNode session(String physical) {
    ObjectNode node = mapper.valueToTree(sessions.get(physical));
    List<BoxManagedProcessInfo> processes = sessions.processes().list(physical);
    ObjectNode byId = mapper.createObjectNode();
    for (BoxManagedProcessInfo process : processes) {
      byId.set(process.processId(), mapper.valueToTree(process));
    }
    node.set("managed_processes", byId);
    JsonNode defaultProcess = byId.get(BoxManagedProcessSpec.DEFAULT_PROCESS_ID);
    if (defaultProcess != null) {
      node.set("managed_process", defaultProcess);
    }
    return node;
  }

  private JsonNode status(Tenant tenant) {
    List<BoxSessionInfo> mine = tenancy.sessionsOf(tenant.context);
    long running =
        mine.stream()
            .flatMap(s -> sessions.processes().list(s.sessionId()).stream())
            .filter(p -> p.status() == dev.box.api.BoxManagedProcessStatus.RUNNING)
            .count();
    ObjectNode result = mapper.createObjectNode();
    result.set("backend", backend());
    result.put("active_sessions", mine.size());
    result.put("managed_processes", running);
    result.put("session_ttl_sec", sessions.config().sessionTtl().toSeconds());
    ObjectNode limits = result.putObject("limits");
    BoxInit.Limits applied = init.limits();
    limits.put("max_sessions", applied.maxSessions());
    limits.put("max_managed_processes", applied.maxManagedProcesses());
    limits.put("max_completed_processes", applied.maxCompletedProcesses());
    limits.put("max_admission_records", applied.maxAdmissionRecords());
    limits.put("max_rpc_file_bytes", applied.maxRpcFileBytes());
    return result;
  }

  private ObjectNode backend() {
    BackendStatus status = sessions.backendStatus();
    ObjectNode node = mapper.createObjectNode();
    node.put("name", status.name());
    node.put("available", status.available());
    return node;
  }

  private void shutdownSessions() {
    for (BoxSessionInfo session : sessions.list()) {
      try {
        sessions.delete(session.sessionId());
      } catch (BoxException e) {
        log.debug("session {} was gone before box_shutdown reached it", session.sessionId());
      }
    }
  }

  private static String required(JsonNode data, String key) {
    JsonNode value = data.get(key);
    if (value == null || value.isNull()) {
      throw ActionError.missingKey(key);
    }
    return value.isTextual() ? value.asText() : value.toString();
  }

  private static String processId(JsonNode data) {
    JsonNode value = data.get("process_id");
    return value == null || value.isNull()
        ? BoxManagedProcessSpec.DEFAULT_PROCESS_ID
        : value.asText();
  }

  /** One tenant request's view: its physical prefix, and the mapping of ids back to logical. */
  private static final class Tenant {
    final ActionContext context;
    final String prefix;
    final @Nullable String onlySession;

    /**
     * @param onlySession the one logical session id grant-enforced mode allows, or null
     */
    Tenant(ActionContext context, @Nullable String onlySession) {
      this.context = context;
      this.prefix = Tenancy.prefix(context);
      this.onlySession = onlySession;
    }

    String physical(String logical) {
      if (onlySession != null && !logical.strip().equals(onlySession)) {
        throw Admission.admissionError("Managed sandbox session_id is runtime-owned");
      }
      return Tenancy.physicalId(context, logical);
    }

    String toLogicalText(String text) {
      return text.replace(prefix, "");
    }

    /** Rewrites every {@code session_id} value under {@code node} to its logical id. */
    void toLogical(JsonNode node) {
      if (node instanceof ObjectNode object) {
        JsonNode id = object.get("session_id");
        if (id != null && id.isTextual() && id.asText().startsWith(prefix)) {
          object.put("session_id", id.asText().substring(prefix.length()));
        }
        object.forEach(this::toLogical);
      } else if (node.isArray()) {
        node.forEach(this::toLogical);
      }
    }
  }
}
