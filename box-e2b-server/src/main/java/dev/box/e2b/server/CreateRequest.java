package dev.box.e2b.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxEgress;
import dev.box.api.BoxLimits;
import dev.box.api.BoxNetworkMode;
import dev.box.api.BoxProfile;
import dev.box.api.BoxSpec;
import dev.box.api.BoxValidationException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The body of {@code POST /v2/sandboxes} read into the spec of a Box session. Every field is either
 * applied or refused with the reason: a setting Box cannot apply (an egress proxy, domain names in
 * {@code allowOut}, auto-pause, volumes, MCP) is never silently dropped.
 *
 * @param templateId the template, {@code base} when none is named
 * @param timeoutSeconds the lifetime from now
 * @param metadata the caller's metadata
 * @param envVars the sandbox's environment
 * @param network whether the sandbox reaches the internet
 * @param networkAsked whether the caller set {@code allow_internet_access} (else it is the default)
 * @param egress the caller's egress rules
 */
record CreateRequest(
    String templateId,
    long timeoutSeconds,
    Map<String, String> metadata,
    Map<String, String> envVars,
    BoxNetworkMode network,
    boolean networkAsked,
    BoxEgress egress) {

  /** The template of the server's default image: E2B's own default. */
  static final String BASE = "base";

  /** E2B's default lifetime when the request names none. */
  static final long DEFAULT_TIMEOUT_SECONDS = 300;

  /** The longest lifetime accepted (E2B's own limit, a day). */
  static final long MAX_TIMEOUT_SECONDS = 24 * 3600;

  /** The home and default directory of E2B's user, where the session's workspace is mounted. */
  static final String HOME = "/home/user";

  private static final Set<String> FIELDS =
      Set.of(
          "templateID",
          "timeout",
          "metadata",
          "envVars",
          "allow_internet_access",
          "network",
          "secure",
          "autoPause",
          "autoPauseMemory",
          "autoResume",
          "mcp",
          "iam",
          "volumeMounts");

  private static final Set<String> NETWORK_FIELDS = Set.of("allowOut", "denyOut");

  /** Reads {@code body}; throws a 400 {@link ApiError} naming what is wrong or not supported. */
  static CreateRequest read(JsonNode body) {
    requireFields(body, FIELDS);
    refuseSet(body, "autoPause", "auto-pause");
    refuseSet(body, "autoPauseMemory", "auto-pause");
    refuseSet(body.path("autoResume"), "enabled", "auto-resume");
    refusePresent(body, "mcp", "MCP gateways");
    refusePresent(body, "iam", "IAM tokens");
    if (body.path("volumeMounts").size() > 0) {
      throw ApiError.notSupported("volumeMounts");
    }
    if (body.has("secure") && !body.get("secure").asBoolean(true)) {
      throw ApiError.badRequest("secure=false is not supported: envd always requires its token");
    }
    JsonNode template = body.path("templateID");
    String templateId = template.isMissingNode() || template.isNull() ? BASE : text(template);
    boolean internet = body.path("allow_internet_access").asBoolean(true);
    return new CreateRequest(
        templateId,
        timeout(body.path("timeout"), DEFAULT_TIMEOUT_SECONDS),
        strings(body.path("metadata"), "metadata"),
        strings(body.path("envVars"), "envVars"),
        internet ? BoxNetworkMode.ON : BoxNetworkMode.OFF,
        body.has("allow_internet_access"),
        egress(body.path("network"), internet));
  }

  /**
   * The spec of the session {@code sessionId}. The template is {@code base} (the server's default
   * image), one of Box's built-in profiles (its image and limits, and the fields it locks), a
   * snapshot (the server's default image, the workspace a copy of the snapshot's), or, on a backend
   * that runs {@code images}, the image of that name.
   *
   * @param snapshots whether a template id names a snapshot
   * @throws ApiError 404 for a template that is none of these; 400 when the caller asked for the
   *     internet and the profile locks it off, or the spec is invalid
   */
  BoxSpec spec(String sessionId, boolean images, Predicate<String> snapshots) {
    BoxProfile profile = BoxProfile.BUILTIN.get(templateId);
    boolean snapshot = !templateId.equals(BASE) && profile == null && snapshots.test(templateId);
    if (!templateId.equals(BASE) && profile == null && !snapshot && !images) {
      throw ApiError.notFound(
          "template '"
              + templateId
              + "' not found: the templates are 'base' (the server's default image), Box's"
              + " profiles ("
              + String.join(", ", BoxProfile.BUILTIN.keySet())
              + ") and the snapshots; this backend runs no other image");
    }
    try {
      BoxSpec.Builder spec =
          BoxSpec.builder(sessionId).mountPath(HOME).workdir(HOME).persistent(true);
      if (profile == null) {
        spec.image(templateId.equals(BASE) || snapshot ? BoxSpec.DEFAULT_IMAGE : templateId);
        return spec.fromSnapshot(snapshot ? templateId : null)
            .network(network)
            .egress(egress)
            .build();
      }
      if (profile.locked().contains("network") && profile.network() != network && networkAsked) {
        throw ApiError.badRequest(
            "template '" + templateId + "' locks the network " + profile.network().wireName());
      }
      BoxLimits limits = profile.limits();
      spec.image(profile.image())
          .network(networkAsked ? network : profile.network())
          .egress(egress)
          .cpus(limits.cpus())
          .memoryMb(limits.memoryMb())
          .pidsLimit(limits.pidsLimit())
          .readOnlyRootfs(limits.readOnlyRootfs());
      return profile.apply(spec.build());
    } catch (BoxValidationException e) {
      throw ApiError.badRequest(String.valueOf(e.getMessage()));
    }
  }

  /** A lifetime in seconds: {@code fallback} when absent, else 1 to a day. */
  static long timeout(JsonNode node, long fallback) {
    if (node.isMissingNode() || node.isNull()) {
      return fallback;
    }
    if (!node.canConvertToLong() || !node.isIntegralNumber()) {
      throw ApiError.badRequest("timeout must be a whole number of seconds");
    }
    long seconds = node.asLong();
    if (seconds < 1 || seconds > MAX_TIMEOUT_SECONDS) {
      throw ApiError.badRequest("timeout must be 1 to " + MAX_TIMEOUT_SECONDS + " seconds");
    }
    return seconds;
  }

  /**
   * The egress rules of {@code network} ({@code allowOut}, {@code denyOut}; any other field is
   * refused with 501), for a sandbox whose internet access is {@code internet}.
   */
  static BoxEgress egress(JsonNode network, boolean internet) {
    if (network.isMissingNode() || network.isNull()) {
      return BoxEgress.NONE;
    }
    if (!network.isObject()) {
      throw ApiError.badRequest("network must be an object");
    }
    for (Iterator<String> names = network.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!NETWORK_FIELDS.contains(name)) {
        throw ApiError.notSupported("network." + name);
      }
    }
    List<String> allow = list(network.path("allowOut"), "network.allowOut");
    List<String> deny = list(network.path("denyOut"), "network.denyOut");
    if (!internet && !(allow.isEmpty() && deny.isEmpty())) {
      throw ApiError.badRequest(
          "network.allowOut and network.denyOut need allow_internet_access: the sandbox has no"
              + " network");
    }
    try {
      return new BoxEgress(
          BoxEgress.parseAll("network.allowOut", allow),
          BoxEgress.parseAll("network.denyOut", deny));
    } catch (BoxValidationException e) {
      throw ApiError.badRequest(
          e.getMessage() + " (Box's egress rules take IP addresses and CIDR blocks, not domains)");
    }
  }

  /**
   * Refuses with 400 a {@code body} that is not a JSON object, or has a field not in {@code
   * fields}.
   */
  static void requireFields(JsonNode body, Set<String> fields) {
    if (!body.isObject()) {
      throw ApiError.badRequest("the body must be a JSON object");
    }
    for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!fields.contains(name)) {
        throw ApiError.badRequest("unknown field '" + name + "'");
      }
    }
  }

  private static List<String> list(JsonNode node, String field) {
    if (node.isMissingNode() || node.isNull()) {
      return List.of();
    }
    if (!node.isArray()) {
      throw ApiError.badRequest(field + " must be an array of strings");
    }
    List<String> values = new ArrayList<>();
    for (JsonNode entry : node) {
      values.add(text(entry));
    }
    return values;
  }

  private static Map<String, String> strings(JsonNode node, String field) {
    Map<String, String> values = new LinkedHashMap<>();
    if (node.isMissingNode() || node.isNull()) {
      return values;
    }
    if (!node.isObject()) {
      throw ApiError.badRequest(field + " must be an object of strings");
    }
    node.fields().forEachRemaining(e -> values.put(e.getKey(), text(e.getValue())));
    return values;
  }

  private static String text(JsonNode node) {
    if (!node.isTextual()) {
      throw ApiError.badRequest("expected a string, got " + node.getNodeType());
    }
    return node.asText();
  }

  private static void refuseSet(JsonNode node, String field, String what) {
    if (node.path(field).asBoolean(false)) {
      throw ApiError.notSupported(what);
    }
  }

  private static void refusePresent(JsonNode node, String field, String what) {
    JsonNode value = node.path(field);
    if (!value.isMissingNode() && !value.isNull()) {
      throw ApiError.notSupported(what);
    }
  }
}
