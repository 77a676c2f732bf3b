package dev.box.langbot;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.core.backend.BackendStatus;
import dev.box.core.session.SessionManager;

/**
 * What {@link BoxInit} and the action classes all work with, built once by {@link
 * ActionDispatcher}: the core's sessions, the Workspace fence, the admission state of
 * grant-enforced mode, and the JSON mapper.
 */
record ActionServices(
    SessionManager sessions, Tenancy tenancy, Admission admission, ObjectMapper mapper) {

  /** The backend's name and availability, as {@code box_health} and {@code box_status} show it. */
  ObjectNode backend() {
    BackendStatus status = sessions.backendStatus();
    ObjectNode node = mapper.createObjectNode();
    node.put("name", status.name());
    node.put("available", status.available());
    return node;
  }
}
