package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxException;
import dev.box.api.BoxSessionInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LangBot's host-control actions ({@code __ping}, {@code box_init}, the admission grants, ...): an
 * authenticated connection is all they need, and they see no Workspace context.
 */
final class HostActions {
  private static final Logger log = LoggerFactory.getLogger(HostActions.class);

  /** One host-control action of {@code actions} on a request's {@code data}. */
  @FunctionalInterface
  interface Action {
    JsonNode run(HostActions actions, JsonNode data) throws Exception;
  }

  /** The host-control actions, in the order {@link ActionDispatcher#ACTIONS} lists them. */
  static final ActionTable<Action> TABLE =
      ActionTable.<Action>builder()
          .add("__ping", HostActions::ping)
          .add("__file_chunk", HostActions::fileChunk)
          .add("box_init", HostActions::init)
          .add("box_health", HostActions::health)
          .add("box_get_backend_info", HostActions::backendInfo)
          .add("box_upsert_sandbox_admission_grant", HostActions::upsertGrant)
          .add("box_revoke_sandbox_admission_grant", HostActions::revokeGrant)
          .add("box_verify_shared_workspace", HostActions::verifySharedWorkspace)
          .add("box_shutdown", HostActions::shutdown)
          .build();

  private final ActionServices services;
  private final ObjectMapper mapper;
  private final BoxInit boxInit;
  private final ControlAuth auth;
  private final RpcFiles files;
  private final ManagedWorkspace managedWorkspace;

  HostActions(
      ActionServices services,
      BoxInit boxInit,
      ControlAuth auth,
      RpcFiles files,
      ManagedWorkspace managedWorkspace) {
    this.services = services;
    this.mapper = services.mapper();
    this.boxInit = boxInit;
    this.auth = auth;
    this.files = files;
    this.managedWorkspace = managedWorkspace;
  }

  /** Ends the sessions of {@code workspaces}, whose grants ended. */
  void dropSessions(List<ActionContext> workspaces) {
    for (ActionContext workspace : workspaces) {
      for (BoxSessionInfo session : services.tenancy().sessionsOf(workspace)) {
        try {
          services.sessions().delete(session.sessionId());
        } catch (BoxException e) {
          log.debug("session {} was gone before its grant ended", session.sessionId());
        }
      }
    }
  }

  private JsonNode ping(JsonNode data) {
    return mapper.createObjectNode();
  }

  private JsonNode fileChunk(JsonNode data) throws IOException {
    files.receive(data);
    return mapper.createObjectNode();
  }

  private JsonNode init(JsonNode data) {
    Map<String, String> notApplied = boxInit.apply(data);
    ObjectNode answer = mapper.createObjectNode().put("initialized", true);
    if (!notApplied.isEmpty()) {
      answer.set("not_applied", mapper.valueToTree(notApplied));
    }
    return answer;
  }

  private JsonNode health(JsonNode data) {
    if (!services.admission().required()) {
      return services.backend();
    }
    ObjectNode readiness = services.admission().readiness();
    if (!readiness.path("ready").asBoolean(false)) {
      throw Admission.readinessError("managed sandbox isolation is not ready");
    }
    return readiness;
  }

  private JsonNode backendInfo(JsonNode data) {
    if (!services.admission().required()) {
      return services.backend();
    }
    ObjectNode readiness = services.admission().readiness();
    ObjectNode info = mapper.createObjectNode();
    info.set("name", readiness.path("backend").path("name"));
    info.put("available", readiness.path("ready").asBoolean(false));
    info.set("readiness", readiness);
    return info;
  }

  private JsonNode upsertGrant(JsonNode data) {
    List<ActionContext> drop = new ArrayList<>();
    ObjectNode answer = services.admission().upsert(data, auth::isTrusted, drop);
    dropSessions(drop);
    services
        .tenancy()
        .observe(
            new ActionContext(
                data.path("instance_uuid").asText().strip(),
                answer.path("workspace_uuid").asText(),
                answer.path("execution_generation").asLong(),
                null));
    return answer;
  }

  private JsonNode revokeGrant(JsonNode data) {
    List<ActionContext> drop = new ArrayList<>();
    ObjectNode answer = services.admission().revoke(data, auth::isTrusted, drop);
    dropSessions(drop);
    return answer;
  }

  private JsonNode verifySharedWorkspace(JsonNode data) {
    JsonNode marker = data.get("marker_name");
    return managedWorkspace.verify(marker != null && marker.isTextual() ? marker.asText() : "");
  }

  private JsonNode shutdown(JsonNode data) {
    for (BoxSessionInfo session : services.sessions().list()) {
      try {
        services.sessions().delete(session.sessionId());
      } catch (BoxException e) {
        log.debug("session {} was gone before box_shutdown reached it", session.sessionId());
      }
    }
    return mapper.createObjectNode();
  }
}
