package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxProfile;
import dev.box.api.BoxSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Turns the {@code data} of {@code box_exec} and {@code box_create_session} into the {@link
 * BoxSpec} the core runs: in grant-enforced mode, normalized to the Workspace's grant ({@link
 * AdmittedSpec}); otherwise with the physical session id, skill mounts confined, and LangBot's
 * configured image and profile applied.
 *
 * @param admission grant-enforced mode: whether it is on, and the policy a spec is normalized to
 * @param managedWorkspace the host root of the Workspaces in grant-enforced mode
 * @param skills confines skill mounts to the requesting Workspace's skills
 * @param local LangBot's {@code box.local} settings in force, read on every spec
 */
record TenantSpecs(
    Admission admission,
    ManagedWorkspace managedWorkspace,
    SkillActions skills,
    Supplier<BoxInit.Local> local,
    ObjectMapper mapper) {

  /**
   * The spec of {@code data} for {@code tenant}.
   *
   * @throws ActionError {@code BoxValidationError} when {@code data} is no object; {@code KeyError}
   *     when it names no session (outside grant-enforced mode)
   */
  BoxSpec spec(JsonNode data, TenantView tenant) throws IOException {
    if (!(data instanceof ObjectNode object)) {
      throw new ActionError("BoxValidationError", "data must be an object");
    }
    ObjectNode copy = object.deepCopy();
    if (admission.required()) {
      copy.put("session_id", admission.policy().logicalSessionId());
      return AdmittedSpec.normalize(
          mapper.treeToValue(copy, BoxSpec.class),
          tenant.context(),
          admission.policy(),
          managedWorkspace.root(),
          name -> skillPackage(tenant.context(), name));
    }
    copy.put("session_id", tenant.physical(ActionData.required(data, "session_id")));
    skills.confineMounts(copy, tenant.context());
    BoxInit.Local settings = local.get();
    JsonNode image = copy.get("image");
    String configuredImage = settings.image();
    if (configuredImage != null && (image == null || image.isNull() || image.asText().isBlank())) {
      copy.put("image", configuredImage);
    }
    BoxSpec spec = mapper.treeToValue(copy, BoxSpec.class);
    BoxProfile profile = settings.profile();
    return profile == null ? spec : profile.apply(spec);
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
}
