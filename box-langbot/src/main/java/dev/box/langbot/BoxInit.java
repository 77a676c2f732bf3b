package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxValidationException;
import dev.box.core.RuntimeConfig;
import dev.box.core.session.SessionManager;
import java.time.Duration;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LangBot's {@code box} config section applied to the running runtime ({@code box_init} and {@code
 * LANGBOT_BOX_CONFIG}): the section is merged key by key into the current one, and {@code limits}
 * are validated as a whole before any is applied, so an invalid one changes nothing.
 */
final class BoxInit {
  private static final Logger log = LoggerFactory.getLogger(BoxInit.class);

  /** The {@code box.limits} the reference knows, with their ranges. */
  record Limits(
      int maxSessions,
      int maxManagedProcesses,
      int maxCompletedProcesses,
      int maxAdmissionRecords,
      int maxRpcFileBytes,
      int completedProcessRetentionSec) {

    static Limits read(JsonNode limits, Limits defaults) {
      return new Limits(
          value(limits, "max_sessions", defaults.maxSessions, 0, 5000),
          value(limits, "max_managed_processes", defaults.maxManagedProcesses, 0, 1024),
          value(limits, "max_completed_processes", defaults.maxCompletedProcesses, 0, 10000),
          value(limits, "max_admission_records", defaults.maxAdmissionRecords, 1, 250_000),
          value(limits, "max_rpc_file_bytes", defaults.maxRpcFileBytes, 1, 100 * 1024 * 1024),
          value(
              limits,
              "completed_process_retention_sec",
              defaults.completedProcessRetentionSec,
              0,
              86400));
    }

    private static int value(JsonNode limits, String key, int fallback, int min, int max) {
      JsonNode node = limits.get(key);
      if (node == null || node.isNull()) {
        return fallback;
      }
      if (!node.isIntegralNumber() || !node.canConvertToInt()) {
        throw new BoxValidationException("box.limits." + key + " must be an integer");
      }
      int value = node.asInt();
      if (value < min || value > max) {
        throw new BoxValidationException(
            "box.limits." + key + " must be between " + min + " and " + max);
      }
      return value;
    }
  }

  /** The reference's defaults, used for keys a {@code limits} section leaves out. */
  static final Limits DEFAULTS = new Limits(64, 64, 256, 100_000, 20 * 1024 * 1024, 300);

  private final SessionManager sessions;
  private final Tenancy tenancy;
  private ObjectNode config;
  private volatile Limits limits;

  BoxInit(SessionManager sessions, Tenancy tenancy, ObjectMapper mapper) {
    this.sessions = sessions;
    this.tenancy = tenancy;
    this.config = mapper.createObjectNode();
    RuntimeConfig current = sessions.config();
    this.limits =
        new Limits(
            current.maxSessions(),
            current.processes().maxRunning(),
            current.processes().maxCompleted(),
            Tenancy.DEFAULT_MAX_RECORDS,
            DEFAULTS.maxRpcFileBytes,
            (int) current.processes().completedRetention().toSeconds());
  }

  /** The limits in force. */
  Limits limits() {
    return limits;
  }

  /**
   * Merges {@code section} into the current config and applies it.
   *
   * @throws BoxValidationException with the reference's message when a limit is invalid; nothing is
   *     applied then
   */
  synchronized void apply(JsonNode section) {
    if (!section.isObject()) {
      throw new BoxValidationException("box config must be an object");
    }
    ObjectNode merged = config.deepCopy();
    for (Map.Entry<String, JsonNode> entry : section.properties()) {
      if (!entry.getKey().equals("runtime")) {
        merged.set(entry.getKey(), entry.getValue());
      }
    }
    JsonNode limitsNode = merged.get("limits");
    Limits next =
        limitsNode != null && limitsNode.isObject() ? Limits.read(limitsNode, DEFAULTS) : limits;
    config = merged;
    limits = next;
    RuntimeConfig.ProcessLimits current = sessions.config().processes();
    sessions.applyLimits(
        next.maxSessions(),
        new RuntimeConfig.ProcessLimits(
            next.maxManagedProcesses(),
            next.maxCompletedProcesses(),
            Duration.ofSeconds(next.completedProcessRetentionSec()),
            current.stdoutBufferBytes()));
    tenancy.maxRecords(next.maxAdmissionRecords());
    String backend = merged.path("backend").asText("").strip();
    String running = sessions.backendStatus().name();
    if (!backend.isEmpty() && !backend.equals("local") && !backend.equals(running)) {
      log.warn("box.backend={} is not available in Box; sandboxes keep using {}", backend, running);
    }
    if (merged.has("local") || merged.has("admission")) {
      log.warn(
          "box.local and box.admission are not applied by this runtime yet; Box's own settings"
              + " (--data-dir, --allowed-mount-roots) stay in force");
    }
    log.info("applied LangBot box config: limits {}", next);
  }
}
