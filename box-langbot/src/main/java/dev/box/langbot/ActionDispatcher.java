package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxException;
import dev.box.core.session.SessionManager;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The actions LangBot sends over its control channel ({@code box_exec}, {@code box_create_session},
 * ...), carried out with {@link SessionManager}: {@linkplain HostActions host-control actions} need
 * only an authenticated connection; {@linkplain TenantActions tenant actions} and {@linkplain
 * SkillActions skill actions} need a context of the trusted instance, pass the generation fence,
 * and see logical session ids while the core sees physical ones.
 */
public final class ActionDispatcher implements ActionHandler {
  /** The directory under the data dir that holds skills when LangBot names no skills root. */
  public static final String SKILLS_DIR = "skills";

  /** The directory under the state dir that holds the files of {@code __file_chunk}. */
  public static final String RPC_FILES_DIR = "rpc-files";

  /**
   * Every action this dispatcher serves, in a fixed order: the host-control actions, the tenant
   * actions, then the skill actions. Any other name is answered {@code BoxError: unknown action}.
   */
  public static final List<String> ACTIONS =
      Stream.of(HostActions.TABLE.names(), TenantActions.TABLE.names(), SkillActions.TABLE.names())
          .flatMap(List::stream)
          .toList();

  private final Tenancy tenancy;
  private final ControlAuth auth;
  private final BoxInit init;
  private final Admission admission;
  private final SkillActions skills;
  private final HostActions hostActions;
  private final TenantActions tenantActions;

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
    this(sessions, tenancy, auth, mapper, unsafeSoftStorageLimits, dataDir, sessions.clock(), null);
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
    this.tenancy = tenancy;
    this.auth = auth;
    ManagedWorkspace managedWorkspace =
        new ManagedWorkspace(
            sessions::backendStatus,
            this::local,
            unsafeSoftStorageLimits,
            mapper,
            new IsolationProbe(sessions::exec, sessions::delete, sessions.config().dataDir()));
    this.admission = new Admission(clock, readiness != null ? readiness : managedWorkspace, mapper);
    ActionServices services = new ActionServices(sessions, tenancy, admission, mapper);
    this.init = new BoxInit(services);
    RpcFiles files =
        new RpcFiles(
            sessions.config().dataDir().resolve(RPC_FILES_DIR),
            () -> init.limits().maxRpcFileBytes());
    this.skills =
        new SkillActions(
            () -> skillsRoot(dataDir),
            real -> {
              if (init.local().skillsRoot() != null) {
                sessions.hostPathPolicy().check(real.toString(), false);
              }
            },
            files,
            mapper);
    this.hostActions = new HostActions(services, init, auth, files, managedWorkspace);
    this.tenantActions =
        new TenantActions(
            services,
            init,
            new TenantSpecs(admission, managedWorkspace, skills, init::local, mapper));
  }

  /**
   * Where skills live: LangBot's {@code box.local.skills_root}, else {@code skills} under the data
   * dir. A root LangBot configured is a host path of the operator's, so what LangBot names in it
   * answers to the host-path policy; Box's own default root does not.
   */
  private Path skillsRoot(Path dataDir) {
    Path configured = init.local().skillsRoot();
    return configured != null ? configured : dataDir.resolve(SKILLS_DIR);
  }

  private BoxInit.Local local() {
    return init.local();
  }

  /** Applies LangBot's {@code box} config section, as {@code box_init} does. */
  public void applyConfig(JsonNode section) {
    init.apply(section);
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
      hostActions.dropSessions(admission.reapExpired());
    }
  }

  @Override
  public JsonNode handle(String action, JsonNode data, @Nullable JsonNode context)
      throws Exception {
    HostActions.Action host = HostActions.TABLE.handler(action);
    if (host != null) {
      return host.run(hostActions, data);
    }
    TenantActions.Action tenantAction = TenantActions.TABLE.handler(action);
    if (tenantAction == null && SkillActions.TABLE.handler(action) == null) {
      throw new ActionError("BoxError", "unknown action " + action);
    }
    ActionContext tenant = trustedContext(context);
    if (admission.required()) {
      reapExpiredGrants();
      if (tenantAction != null && tenantAction.touchesSandboxes()) {
        admission.require(tenant);
      }
    }
    tenancy.observe(tenant);
    TenantView view =
        new TenantView(tenant, admission.required() ? admission.policy().logicalSessionId() : null);
    JsonNode result;
    try {
      result =
          tenantAction != null
              ? tenantAction.handler().run(tenantActions, data, view)
              : skills.handle(action, data, tenant);
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
}
