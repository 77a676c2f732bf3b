package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.box.api.BoxLimits;
import dev.box.api.BoxValidationException;
import java.util.Map;
import java.util.Set;

/**
 * LangBot's {@code box.admission} section: whether sandbox actions need a grant from the LangBot
 * host (grant-enforced mode), and the hard caps every grant and every admitted session gets. The
 * fields, defaults and constraints are the reference runtime's.
 *
 * @param required whether grant-enforced mode is on
 * @param logicalSessionId the one logical session id an admitted Workspace has ({@code global})
 * @param requiredBackend the backend grant-enforced mode requires ({@code nsjail})
 * @param maxSessions sessions per Workspace, 0 or 1
 * @param maxManagedProcesses managed processes per Workspace, always 0
 * @param maxGrantTtlSec the longest lifetime of a grant
 * @param maxTimeoutSec the longest exec timeout of an admitted exec
 * @param limits the CPU, memory and process limits, root file system and workspace quota of an
 *     admitted session
 * @param readinessCacheSec how long a readiness answer is reused
 */
record AdmissionPolicy(
    boolean required,
    String logicalSessionId,
    String requiredBackend,
    int maxSessions,
    int maxManagedProcesses,
    int maxGrantTtlSec,
    int maxTimeoutSec,
    BoxLimits limits,
    int readinessCacheSec) {

  /** The reference's defaults: admission off. */
  static final AdmissionPolicy DEFAULT =
      new AdmissionPolicy(
          false, "global", "nsjail", 1, 0, 300, 120, new BoxLimits(1.0, 512, 128, true, 0), 15);

  private static final Set<String> INTEGERS =
      Set.of(
          "max_sessions",
          "max_managed_processes",
          "max_grant_ttl_sec",
          "max_timeout_sec",
          "memory_mb",
          "pids_limit",
          "workspace_quota_mb",
          "readiness_cache_sec");

  private static final Set<String> FIELDS =
      Set.of(
          "required",
          "logical_session_id",
          "required_backend",
          "max_sessions",
          "max_managed_processes",
          "max_grant_ttl_sec",
          "max_timeout_sec",
          "cpus",
          "memory_mb",
          "pids_limit",
          "read_only_rootfs",
          "workspace_quota_mb",
          "readiness_cache_sec");

  /** The same policy with grant-enforced mode on. */
  AdmissionPolicy enforced() {
    return new AdmissionPolicy(
        true,
        logicalSessionId,
        requiredBackend,
        maxSessions,
        maxManagedProcesses,
        maxGrantTtlSec,
        maxTimeoutSec,
        limits,
        readinessCacheSec);
  }

  /**
   * Reads an {@code admission} section; a key it leaves out takes the default.
   *
   * @throws BoxValidationException naming the first field that is unknown, of the wrong type or out
   *     of range
   */
  static AdmissionPolicy read(JsonNode node) {
    if (!node.isObject()) {
      throw new BoxValidationException("box.admission must be an object");
    }
    for (Map.Entry<String, JsonNode> field : node.properties()) {
      if (!FIELDS.contains(field.getKey())) {
        throw invalid(field.getKey(), "extra inputs are not permitted");
      }
      if (INTEGERS.contains(field.getKey())
          && (!field.getValue().isIntegralNumber() || !field.getValue().canConvertToInt())) {
        throw invalid(field.getKey(), "must be an integer");
      }
    }
    AdmissionPolicy d = DEFAULT;
    boolean required = bool(node, "required", d.required);
    String logical = literal(node, "logical_session_id", d.logicalSessionId);
    String backend = literal(node, "required_backend", d.requiredBackend);
    int maxSessions = integer(node, "max_sessions", d.maxSessions);
    if (maxSessions < 0 || maxSessions > 1) {
      throw invalid("max_sessions", "max_sessions must be between 0 and 1");
    }
    int maxProcesses = integer(node, "max_managed_processes", d.maxManagedProcesses);
    if (maxProcesses != 0) {
      throw invalid("max_managed_processes", "max_managed_processes must be 0");
    }
    int ttl = positive(node, "max_grant_ttl_sec", d.maxGrantTtlSec);
    int timeout = positive(node, "max_timeout_sec", d.maxTimeoutSec);
    BoxLimits defaultLimits = d.limits;
    double cpus = defaultLimits.cpus();
    JsonNode cpusNode = node.get("cpus");
    if (cpusNode != null && !cpusNode.isNull()) {
      if (!cpusNode.isNumber()) {
        throw invalid("cpus", "cpus must be a number");
      }
      cpus = cpusNode.asDouble();
      if (!(cpus > 0) || Double.isInfinite(cpus)) {
        throw invalid("cpus", "cpus must be greater than 0");
      }
    }
    int memory = integer(node, "memory_mb", defaultLimits.memoryMb());
    if (memory < 32) {
      throw invalid("memory_mb", "memory_mb must be at least 32");
    }
    int pids = positive(node, "pids_limit", defaultLimits.pidsLimit());
    boolean readOnly = bool(node, "read_only_rootfs", defaultLimits.readOnlyRootfs());
    int quota = nonNegative(node, "workspace_quota_mb", defaultLimits.workspaceQuotaMb());
    int cache = nonNegative(node, "readiness_cache_sec", d.readinessCacheSec);
    return new AdmissionPolicy(
        required,
        logical,
        backend,
        maxSessions,
        maxProcesses,
        ttl,
        timeout,
        new BoxLimits(cpus, memory, pids, readOnly, quota),
        cache);
  }

  private static boolean bool(JsonNode node, String key, boolean fallback) {
    JsonNode value = node.get(key);
    if (value == null || value.isNull()) {
      return fallback;
    }
    if (!value.isBoolean()) {
      throw invalid(key, "must be a boolean");
    }
    return value.asBoolean();
  }

  /** The only value the reference's {@code Literal} field takes. */
  private static String literal(JsonNode node, String key, String only) {
    JsonNode value = node.get(key);
    if (value == null || value.isNull()) {
      return only;
    }
    if (!value.isTextual() || !value.asText().equals(only)) {
      throw invalid(key, "input should be '" + only + "'");
    }
    return only;
  }

  private static int integer(JsonNode node, String key, int fallback) {
    JsonNode value = node.get(key);
    return value == null || value.isNull() ? fallback : value.asInt();
  }

  private static int positive(JsonNode node, String key, int fallback) {
    int value = integer(node, key, fallback);
    if (value <= 0) {
      throw invalid(key, "must be greater than 0");
    }
    return value;
  }

  private static int nonNegative(JsonNode node, String key, int fallback) {
    int value = integer(node, key, fallback);
    if (value < 0) {
      throw invalid(key, "must be greater than or equal to 0");
    }
    return value;
  }

  private static BoxValidationException invalid(String key, String message) {
    return new BoxValidationException("box.admission." + key + ": " + message);
  }
}
