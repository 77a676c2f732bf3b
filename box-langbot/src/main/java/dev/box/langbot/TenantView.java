package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.jspecify.annotations.Nullable;

/**
 * One tenant request's view of sessions: LangBot names logical session ids, the core holds physical
 * ones under the Workspace's prefix, and this maps one way on the request and back on the answer.
 */
final class TenantView {
  private final ActionContext context;
  private final String prefix;
  private final @Nullable String onlySession;

  /**
   * @param onlySession the one logical session id grant-enforced mode allows, or null
   */
  TenantView(ActionContext context, @Nullable String onlySession) {
    this.context = context;
    this.prefix = Tenancy.prefix(context);
    this.onlySession = onlySession;
  }

  /** The trusted context of the request. */
  ActionContext context() {
    return context;
  }

  /**
   * The physical id of {@code logical}.
   *
   * @throws ActionError in grant-enforced mode, for any id but the runtime-owned one
   */
  String physical(String logical) {
    if (onlySession != null && !logical.strip().equals(onlySession)) {
      throw Admission.admissionError("Managed sandbox session_id is runtime-owned");
    }
    return Tenancy.physicalId(context, logical);
  }

  /** {@code text} with every physical id in it shown as its logical id. */
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
