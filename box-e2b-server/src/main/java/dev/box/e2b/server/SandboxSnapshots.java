package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxException;
import dev.box.api.BoxProfile;
import dev.box.api.BoxSnapshot;
import dev.box.core.session.SessionForks;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * E2B's snapshots as Box's snapshots of a sandbox's workspace ({@code /home/user}): the snapshot's
 * id is the Box snapshot's name, which doubles as a template id, so that a sandbox created from it
 * starts with a copy of its files. Every Box snapshot is listed, whichever API took it.
 *
 * @param forks Box's forks and snapshots of sessions
 * @param mapper makes the nodes
 */
record SandboxSnapshots(SessionForks forks, ObjectMapper mapper) {
  private static final Set<String> FIELDS = Set.of("name");

  /**
   * Takes a snapshot of {@code sandbox} named by the body's {@code name}, or by a new id when it
   * names none, and returns E2B's {@code SnapshotInfo} of it.
   *
   * @throws ApiError 400 for a name that is not a valid Box snapshot name or is a template's
   * @throws BoxException 409 when a snapshot of that name exists, 429 at {@code max_snapshots}
   */
  ObjectNode take(E2bSandbox sandbox, JsonNode body) {
    CreateRequest.requireFields(body, FIELDS);
    JsonNode given = body.path("name");
    String name;
    if (given.isMissingNode() || given.isNull()) {
      name = Secrets.sandboxId();
    } else if (!given.isTextual()) {
      throw ApiError.badRequest("name must be a string");
    } else {
      name = given.asText();
      if (name.equals(CreateRequest.BASE) || BoxProfile.BUILTIN.containsKey(name)) {
        throw ApiError.badRequest("name '" + name + "' is a template's: choose another");
      }
    }
    BoxSnapshot snapshot = forks.snapshot(sandbox.sessionId(), name);
    sandbox.log().info(snapshot.createdAt(), "snapshot " + name + " taken of the workspace");
    return info(snapshot);
  }

  /**
   * E2B's {@code SnapshotInfo} of every snapshot, oldest first: those of the sandbox {@code
   * sandboxId} only when it is given, and of that name only when {@code name} is.
   */
  List<ObjectNode> list(@Nullable String sandboxId, @Nullable String name) {
    return forks.snapshots().stream()
        .filter(s -> sandboxId == null || s.sessionId().equals(E2bSandbox.sessionIdOf(sandboxId)))
        .filter(s -> name == null || s.name().equals(name))
        .map(this::info)
        .toList();
  }

  /** Whether {@code templateId} names a snapshot. */
  boolean exists(String templateId) {
    try {
      forks.snapshot(templateId);
      return true;
    } catch (BoxException e) {
      return false;
    }
  }

  /**
   * Deletes the snapshot {@code id}; sandboxes created from it keep their files.
   *
   * @throws ApiError 404 when there is no snapshot of that id
   */
  void delete(String id) {
    try {
      forks.deleteSnapshot(id);
    } catch (BoxException e) {
      if (e.code() == BoxErrorCode.NOT_FOUND || e.code() == BoxErrorCode.VALIDATION_ERROR) {
        throw ApiError.notFound("snapshot " + id + " not found");
      }
      throw e;
    }
  }

  private ObjectNode info(BoxSnapshot snapshot) {
    ObjectNode node = mapper.createObjectNode();
    node.put("snapshotID", snapshot.name());
    node.putArray("names").add(snapshot.name());
    return node;
  }
}
