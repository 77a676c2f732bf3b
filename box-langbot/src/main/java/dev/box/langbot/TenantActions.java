package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxManagedProcessInfo;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxManagedProcessStatus;
import dev.box.api.BoxSessionInfo;
import dev.box.core.session.SessionManager;
import java.util.List;

/**
 * LangBot's session and process actions ({@code box_exec}, {@code box_create_session}, ...) for one
 * Workspace: they run with a trusted context and see logical session ids through a {@link
 * TenantView}.
 */
final class TenantActions {
  /** One tenant action of {@code actions} on a request's {@code data}. */
  @FunctionalInterface
  interface Handler {
    JsonNode run(TenantActions actions, JsonNode data, TenantView tenant) throws Exception;
  }

  /**
   * A tenant action.
   *
   * @param touchesSandboxes whether grant-enforced mode admits it against the Workspace's grant
   */
  record Action(boolean touchesSandboxes, Handler handler) {}

  /** The tenant actions, in the order {@link ActionDispatcher#ACTIONS} lists them. */
  static final ActionTable<Action> TABLE =
      ActionTable.<Action>builder()
          .add("box_status", new Action(false, TenantActions::status))
          .add("box_exec", new Action(true, TenantActions::exec))
          .add("box_create_session", new Action(true, TenantActions::createSession))
          .add("box_get_session", new Action(true, TenantActions::getSession))
          .add("box_get_sessions", new Action(true, TenantActions::getSessions))
          .add("box_delete_session", new Action(true, TenantActions::deleteSession))
          .add("box_start_managed_process", new Action(true, TenantActions::startProcess))
          .add("box_get_managed_process", new Action(true, TenantActions::getProcess))
          .add("box_stop_managed_process", new Action(true, TenantActions::stopProcess))
          .build();

  private final ActionServices services;
  private final SessionManager sessions;
  private final ObjectMapper mapper;
  private final BoxInit boxInit;
  private final TenantSpecs specs;

  TenantActions(ActionServices services, BoxInit boxInit, TenantSpecs specs) {
    this.services = services;
    this.sessions = services.sessions();
    this.mapper = services.mapper();
    this.boxInit = boxInit;
    this.specs = specs;
  }

  private JsonNode status(JsonNode data, TenantView tenant) {
    List<BoxSessionInfo> mine = services.tenancy().sessionsOf(tenant.context());
    long running =
        mine.stream()
            .flatMap(s -> sessions.processes().list(s.sessionId()).stream())
            .filter(p -> p.status() == BoxManagedProcessStatus.RUNNING)
            .count();
    ObjectNode result = mapper.createObjectNode();
    result.set("backend", services.backend());
    result.put("active_sessions", mine.size());
    result.put("managed_processes", running);
    result.put("session_ttl_sec", sessions.config().sessionTtl().toSeconds());
    ObjectNode limits = result.putObject("limits");
    BoxInit.Limits applied = boxInit.limits();
    limits.put("max_sessions", applied.maxSessions());
    limits.put("max_managed_processes", applied.maxManagedProcesses());
    limits.put("max_completed_processes", applied.maxCompletedProcesses());
    limits.put("max_admission_records", applied.maxAdmissionRecords());
    limits.put("max_rpc_file_bytes", applied.maxRpcFileBytes());
    return result;
  }

  /**
   * LangBot's own Box runtime strips both streams of an exec result, and LangBot relies on it;
   * Box's REST API does not strip.
   */
  private JsonNode exec(JsonNode data, TenantView tenant) throws Exception {
    ObjectNode result = mapper.valueToTree(sessions.exec(specs.spec(data, tenant)));
    for (String stream : List.of("stdout", "stderr")) {
      JsonNode text = result.get(stream);
      if (text != null && text.isTextual()) {
        result.put(stream, text.asText().strip());
      }
    }
    return result;
  }

  private JsonNode createSession(JsonNode data, TenantView tenant) throws Exception {
    return mapper.valueToTree(sessions.createOrReuse(specs.spec(data, tenant)).info());
  }

  private JsonNode getSession(JsonNode data, TenantView tenant) {
    String physical = tenant.physical(ActionData.required(data, "session_id"));
    ObjectNode node = mapper.valueToTree(sessions.get(physical));
    ObjectNode byId = mapper.createObjectNode();
    for (BoxManagedProcessInfo process : sessions.processes().list(physical)) {
      byId.set(process.processId(), mapper.valueToTree(process));
    }
    node.set("managed_processes", byId);
    JsonNode defaultProcess = byId.get(BoxManagedProcessSpec.DEFAULT_PROCESS_ID);
    if (defaultProcess != null) {
      node.set("managed_process", defaultProcess);
    }
    return node;
  }

  private JsonNode getSessions(JsonNode data, TenantView tenant) {
    ObjectNode result = mapper.createObjectNode();
    result.set("sessions", mapper.valueToTree(services.tenancy().sessionsOf(tenant.context())));
    return result;
  }

  private JsonNode deleteSession(JsonNode data, TenantView tenant) {
    String logical = ActionData.required(data, "session_id");
    sessions.delete(tenant.physical(logical));
    return mapper.createObjectNode().put("deleted", logical);
  }

  private JsonNode startProcess(JsonNode data, TenantView tenant) throws Exception {
    String physical = tenant.physical(ActionData.required(data, "session_id"));
    if (services.admission().required()) {
      // The policy caps managed processes at 0 and every grant within it.
      throw Admission.admissionError("Sandbox admission grant does not permit managed processes");
    }
    JsonNode spec = data.path("spec");
    if (spec.isMissingNode()) {
      throw ActionError.missingKey("spec");
    }
    return mapper.valueToTree(
        sessions
            .processes()
            .start(physical, mapper.treeToValue(spec, BoxManagedProcessSpec.class)));
  }

  private JsonNode getProcess(JsonNode data, TenantView tenant) {
    return mapper.valueToTree(
        sessions
            .processes()
            .get(tenant.physical(ActionData.required(data, "session_id")), processId(data)));
  }

  private JsonNode stopProcess(JsonNode data, TenantView tenant) {
    String processId = processId(data);
    sessions.processes().stop(tenant.physical(ActionData.required(data, "session_id")), processId);
    return mapper.createObjectNode().put("stopped", processId);
  }

  private static String processId(JsonNode data) {
    JsonNode value = data.get("process_id");
    return value == null || value.isNull()
        ? BoxManagedProcessSpec.DEFAULT_PROCESS_ID
        : value.asText();
  }
}
