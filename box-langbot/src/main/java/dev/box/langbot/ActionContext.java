package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxValidationException;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The Workspace a tenant action acts for: which LangBot instance, which Workspace, and which
 * placement generation of it.
 *
 * @param instanceUuid the LangBot instance, non-empty
 * @param workspaceUuid the Workspace, non-empty
 * @param placementGeneration the placement generation, at least 1
 * @param installationUuid the installation, if sent
 */
public record ActionContext(
    String instanceUuid,
    String workspaceUuid,
    long placementGeneration,
    @Nullable String installationUuid) {

  private static final Set<String> FIELDS =
      Set.of("instance_uuid", "workspace_uuid", "placement_generation", "installation_uuid");

  /** Validates every field. */
  public ActionContext {
    if (instanceUuid.isEmpty()) {
      throw new BoxValidationException("context.instance_uuid must not be empty");
    }
    if (workspaceUuid.isEmpty()) {
      throw new BoxValidationException("context.workspace_uuid must not be empty");
    }
    if (placementGeneration < 1) {
      throw new BoxValidationException("context.placement_generation must be at least 1");
    }
  }

  /** Reads the wire form; extra fields are refused, as the reference's model forbids them. */
  static ActionContext fromJson(JsonNode node) {
    if (!node.isObject()) {
      throw new BoxValidationException("context must be an object");
    }
    for (Map.Entry<String, JsonNode> field : node.properties()) {
      if (!FIELDS.contains(field.getKey())) {
        throw new BoxValidationException(
            "context." + field.getKey() + ": extra fields not permitted");
      }
    }
    JsonNode generation = node.path("placement_generation");
    long gen = 1;
    if (!generation.isMissingNode() && !generation.isNull()) {
      if (!generation.isIntegralNumber()) {
        throw new BoxValidationException("context.placement_generation must be an integer");
      }
      gen = generation.asLong();
    }
    JsonNode installation = node.path("installation_uuid");
    return new ActionContext(
        text(node, "instance_uuid"),
        text(node, "workspace_uuid"),
        gen,
        installation.isTextual() ? installation.asText() : null);
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.path(field);
    if (!value.isTextual()) {
      throw new BoxValidationException("context." + field + " must be a string");
    }
    return value.asText();
  }
}
