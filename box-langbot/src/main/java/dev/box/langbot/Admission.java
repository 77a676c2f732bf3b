package dev.box.langbot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxErrorCode;
import dev.box.api.BoxValidationException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Grant-enforced mode ({@code box.admission.required}): the policy in force, the grants the LangBot
 * host installs per Workspace with their monotonic revisions, generations and revocation
 * tombstones, and the readiness every sandbox action needs first.
 *
 * <p>It fails closed: a malformed {@code admission} section turns enforcement on with a
 * configuration error, enforcement cannot be turned off without a restart, and while readiness does
 * not hold every sandbox action is refused. The answers and messages are the reference runtime's.
 */
final class Admission {
  /** Computes the strict readiness report of grant-enforced mode. */
  interface Readiness {
    /**
     * The report: {@code ready}, {@code mode}, {@code backend}, {@code checks} (each check by
     * name), {@code unsafe_soft_storage_limits} and, when something failed, {@code error}.
     */
    ObjectNode check(AdmissionPolicy policy, @Nullable String configError);
  }

  /** One installed grant. */
  record Grant(
      String instanceUuid,
      String workspaceUuid,
      long executionGeneration,
      long entitlementRevision,
      Instant expiresAt,
      int maxSessions,
      int maxManagedProcesses) {

    ActionContext context() {
      return new ActionContext(instanceUuid, workspaceUuid, executionGeneration, null);
    }
  }

  private record Key(String instanceUuid, String workspaceUuid) {}

  private static final Set<String> GRANT_FIELDS =
      Set.of(
          "instance_uuid",
          "workspace_uuid",
          "execution_generation",
          "entitlement_revision",
          "expires_at",
          "max_sessions",
          "max_managed_processes");
  private static final Set<String> REVOCATION_FIELDS =
      Set.of("instance_uuid", "workspace_uuid", "entitlement_revision");

  private final Clock clock;
  private final Readiness readiness;
  private final ObjectMapper mapper;
  private AdmissionPolicy policy = AdmissionPolicy.DEFAULT;
  private @Nullable String configError;
  private int maxRecords = Tenancy.DEFAULT_MAX_RECORDS;
  private final Map<Key, Grant> grants = new HashMap<>();
  private final Map<Key, Long> revisions = new HashMap<>();
  private final Map<Key, Long> generations = new HashMap<>();
  private final Map<Key, List<Integer>> limits = new HashMap<>();
  private final Map<Key, Long> revoked = new HashMap<>();
  private @Nullable ObjectNode cached;
  private Instant cachedAt = Instant.EPOCH;

  Admission(Clock clock, Readiness readiness, ObjectMapper mapper) {
    this.clock = clock;
    this.readiness = readiness;
    this.mapper = mapper;
  }

  /**
   * Applies the merged config's {@code admission} section (null when it has none). A malformed
   * section never turns enforcement off: it turns it on, with the error reported by readiness; once
   * on, enforcement stays on until the runtime restarts.
   */
  synchronized void configure(@Nullable JsonNode section) {
    AdmissionPolicy previous = policy;
    if (section == null || section.isNull()) {
      policy = AdmissionPolicy.DEFAULT;
      configError = null;
    } else {
      try {
        policy = AdmissionPolicy.read(section);
        configError = null;
      } catch (BoxValidationException e) {
        policy = AdmissionPolicy.DEFAULT.enforced();
        configError = e.getMessage();
      }
    }
    if (previous.required() && !policy.required()) {
      policy = previous;
      configError =
          "Sandbox admission enforcement cannot be disabled without restarting the Box Runtime";
    }
    cached = null;
  }

  /** Bounds the Workspaces with records, as {@code box.limits.max_admission_records}. */
  synchronized void maxRecords(int value) {
    maxRecords = value;
  }

  synchronized boolean required() {
    return policy.required();
  }

  synchronized AdmissionPolicy policy() {
    return policy;
  }

  /** The readiness report, reused for {@code readiness_cache_sec}. */
  synchronized ObjectNode readiness() {
    Instant now = clock.instant();
    ObjectNode report = cached;
    if (report == null
        || now.isAfter(cachedAt.plus(Duration.ofSeconds(policy.readinessCacheSec())))) {
      report = readiness.check(policy, configError);
      cached = report;
      cachedAt = now;
    }
    return report.deepCopy();
  }

  /**
   * Refuses every sandbox action while enforcement is on and readiness does not hold.
   *
   * @throws ActionError {@code BoxReadinessError} naming the failed checks
   */
  void requireReady() {
    if (!required()) {
      return;
    }
    ObjectNode report = readiness();
    if (report.path("ready").asBoolean(false)) {
      return;
    }
    List<String> failed = new ArrayList<>();
    report
        .path("checks")
        .properties()
        .forEach(
            e -> {
              if (!e.getValue().asBoolean(false)) {
                failed.add(e.getKey());
              }
            });
    throw readinessError(
        "Managed sandbox isolation is not ready (failed checks: "
            + (failed.isEmpty() ? "unknown" : String.join(", ", failed))
            + ")");
  }

  /**
   * The grant that admits {@code context}, after readiness.
   *
   * @throws ActionError {@code BoxReadinessError} or {@code BoxAdmissionError} with the reason
   */
  synchronized Grant require(ActionContext context) {
    requireReady();
    if (configError != null) {
      throw readinessError("Invalid sandbox admission configuration: " + configError);
    }
    Grant grant = grants.get(new Key(context.instanceUuid(), context.workspaceUuid()));
    if (grant == null) {
      throw admissionError("Sandbox admission grant is missing");
    }
    if (!grant.expiresAt().isAfter(clock.instant())) {
      throw admissionError("Sandbox admission grant has expired");
    }
    if (grant.executionGeneration() != context.placementGeneration()) {
      throw admissionError("Sandbox admission grant belongs to another execution generation");
    }
    if (grant.maxSessions() <= 0) {
      throw admissionError("Sandbox admission grant does not permit sessions");
    }
    if (grant.maxSessions() > policy.maxSessions()
        || grant.maxManagedProcesses() > policy.maxManagedProcesses()) {
      throw admissionError("Sandbox admission grant exceeds the active runtime policy");
    }
    return grant;
  }

  /**
   * Installs or renews a grant ({@code box_upsert_sandbox_admission_grant}).
   *
   * @param drop receives the Workspaces whose sessions the new grant ends
   * @return the reference's answer
   */
  synchronized ObjectNode upsert(
      JsonNode data, Predicate<String> trusted, List<ActionContext> drop) {
    Grant grant = parseGrant(data);
    if (!trusted.test(grant.instanceUuid())) {
      throw ActionError.permission("Sandbox admission grant does not match the trusted instance");
    }
    requireEnforced();
    Instant now = clock.instant();
    if (!grant.expiresAt().isAfter(now)) {
      throw admissionError("Cannot install an expired sandbox admission grant");
    }
    if (grant.expiresAt().isAfter(now.plusSeconds(policy.maxGrantTtlSec()))) {
      throw admissionError("Sandbox admission grant lifetime exceeds the configured maximum");
    }
    if (grant.maxSessions() > policy.maxSessions()) {
      throw admissionError("Sandbox admission grant exceeds the session cap");
    }
    if (grant.maxManagedProcesses() > policy.maxManagedProcesses()) {
      throw admissionError("Sandbox admission grant exceeds the managed-process cap");
    }
    drop.addAll(reapExpired());
    Key key = new Key(grant.instanceUuid(), grant.workspaceUuid());
    requireRecordRoom(key);
    if (grant.entitlementRevision() <= revoked.getOrDefault(key, 0L)) {
      throw admissionError("Sandbox admission grant revision was revoked");
    }
    long highestRevision = revisions.getOrDefault(key, 0L);
    if (grant.entitlementRevision() < highestRevision) {
      throw admissionError("Sandbox admission grant revision is stale");
    }
    if (grant.executionGeneration() < generations.getOrDefault(key, 0L)) {
      throw admissionError("Sandbox admission execution generation is stale");
    }
    List<Integer> fingerprint = List.of(grant.maxSessions(), grant.maxManagedProcesses());
    List<Integer> previousFingerprint = limits.get(key);
    if (grant.entitlementRevision() == highestRevision
        && previousFingerprint != null
        && !previousFingerprint.equals(fingerprint)) {
      throw admissionError("Sandbox admission limits changed without a new entitlement revision");
    }
    Grant current = grants.get(key);
    Grant installed = grant;
    if (current != null
        && current.entitlementRevision() == grant.entitlementRevision()
        && current.executionGeneration() == grant.executionGeneration()
        && grant.expiresAt().isBefore(current.expiresAt())) {
      // Two LangBot replicas renewing one entitlement with slightly different clocks: the
      // shorter duplicate changes nothing.
      installed = current;
    } else {
      grants.put(key, grant);
      revisions.put(key, grant.entitlementRevision());
      generations.put(key, grant.executionGeneration());
      limits.put(key, fingerprint);
      if (current == null
          || current.executionGeneration() != grant.executionGeneration()
          || grant.maxSessions() == 0) {
        drop.add(grant.context());
      }
    }
    ObjectNode answer = mapper.createObjectNode();
    answer.put("installed", true);
    answer.put("workspace_uuid", installed.workspaceUuid());
    answer.put("execution_generation", installed.executionGeneration());
    answer.put("entitlement_revision", installed.entitlementRevision());
    answer.put("max_sessions", installed.maxSessions());
    answer.put("max_managed_processes", installed.maxManagedProcesses());
    answer.put("expires_at", isoformat(installed.expiresAt()));
    return answer;
  }

  /**
   * Revokes a Workspace's grant and leaves a tombstone ({@code
   * box_revoke_sandbox_admission_grant}).
   *
   * @param drop receives the Workspace whose sessions end
   */
  synchronized ObjectNode revoke(
      JsonNode data, Predicate<String> trusted, List<ActionContext> drop) {
    only(data, REVOCATION_FIELDS);
    String instance = id(data, "instance_uuid");
    String workspace = id(data, "workspace_uuid");
    long revision = positiveLong(data, "entitlement_revision");
    if (!trusted.test(instance)) {
      throw ActionError.permission(
          "Sandbox admission revocation does not match the trusted instance");
    }
    requireEnforced();
    Key key = new Key(instance, workspace);
    requireRecordRoom(key);
    long highest = revisions.getOrDefault(key, 0L);
    long tombstone = revoked.getOrDefault(key, 0L);
    if (revision < Math.max(highest, tombstone)) {
      throw admissionError("Sandbox admission revocation is stale");
    }
    Grant active = grants.remove(key);
    revisions.put(key, Math.max(highest, revision));
    revoked.put(key, Math.max(tombstone, revision));
    drop.add(
        active != null
            ? active.context()
            : new ActionContext(
                instance, workspace, Math.max(generations.getOrDefault(key, 1L), 1L), null));
    ObjectNode answer = mapper.createObjectNode();
    answer.put("revoked", true);
    answer.put("workspace_uuid", workspace);
    answer.put("entitlement_revision", revision);
    return answer;
  }

  /** Removes the grants that have expired; their Workspaces' sessions are to be dropped. */
  synchronized List<ActionContext> reapExpired() {
    Instant now = clock.instant();
    List<ActionContext> expired = new ArrayList<>();
    for (Iterator<Grant> it = grants.values().iterator(); it.hasNext(); ) {
      Grant grant = it.next();
      if (!grant.expiresAt().isAfter(now)) {
        it.remove();
        expired.add(grant.context());
      }
    }
    return expired;
  }

  /** As Python's {@code datetime.isoformat()} of a UTC time: microseconds only when set. */
  static String isoformat(Instant instant) {
    OffsetDateTime utc = instant.atOffset(ZoneOffset.UTC);
    return DateTimeFormatter.ofPattern(
            utc.getNano() / 1000 == 0
                ? "uuuu-MM-dd'T'HH:mm:ssxxx"
                : "uuuu-MM-dd'T'HH:mm:ss.SSSSSSxxx")
        .format(utc);
  }

  private void requireEnforced() {
    if (!policy.required()) {
      throw admissionError("Sandbox admission enforcement is not enabled");
    }
    if (configError != null) {
      throw readinessError("Invalid sandbox admission configuration: " + configError);
    }
  }

  private void requireRecordRoom(Key key) {
    if (!revisions.containsKey(key) && revisions.size() >= maxRecords) {
      throw admissionError(
          "Sandbox admission record capacity reached; refusing an unbounded Workspace fence"
              + " allocation");
    }
  }

  private static Grant parseGrant(JsonNode data) {
    only(data, GRANT_FIELDS);
    return new Grant(
        id(data, "instance_uuid"),
        id(data, "workspace_uuid"),
        positiveLong(data, "execution_generation"),
        positiveLong(data, "entitlement_revision"),
        instant(data, "expires_at"),
        (int) Math.min(Integer.MAX_VALUE, nonNegativeLong(data, "max_sessions")),
        (int) Math.min(Integer.MAX_VALUE, nonNegativeLong(data, "max_managed_processes")));
  }

  private static void only(JsonNode data, Set<String> fields) {
    if (!data.isObject()) {
      throw invalid("data", "must be an object");
    }
    String extra =
        data.propertyStream()
            .map(Map.Entry::getKey)
            .filter(k -> !fields.contains(k))
            .sorted()
            .collect(Collectors.joining(", "));
    if (!extra.isEmpty()) {
      throw invalid(extra, "extra inputs are not permitted");
    }
  }

  private static String id(JsonNode data, String field) {
    JsonNode value = data.get(field);
    if (value == null || !value.isTextual()) {
      throw invalid(field, "must be a string");
    }
    String id = value.asText().strip();
    if (id.isEmpty()) {
      throw invalid(field, "must not be empty");
    }
    return id;
  }

  private static long positiveLong(JsonNode data, String field) {
    long value = integral(data, field);
    if (value < 1) {
      throw invalid(field, "must be greater than or equal to 1");
    }
    return value;
  }

  private static long nonNegativeLong(JsonNode data, String field) {
    long value = integral(data, field);
    if (value < 0) {
      throw invalid(field, "must be greater than or equal to 0");
    }
    return value;
  }

  private static long integral(JsonNode data, String field) {
    JsonNode value = data.get(field);
    if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
      throw invalid(field, "must be an integer");
    }
    return value.asLong();
  }

  private static Instant instant(JsonNode data, String field) {
    JsonNode value = data.get(field);
    if (value == null || !value.isTextual()) {
      throw invalid(field, "must be a datetime with a timezone");
    }
    try {
      return OffsetDateTime.parse(value.asText()).toInstant();
    } catch (DateTimeParseException e) {
      throw invalid(field, "expires_at must include a timezone");
    }
  }

  private static ActionError invalid(String field, String message) {
    return new ActionError("BoxValidationError", field + ": " + message);
  }

  static ActionError admissionError(String message) {
    return new ActionError(BoxErrorCode.VALIDATION_ERROR, "BoxAdmissionError", message);
  }

  static ActionError readinessError(String message) {
    return new ActionError(BoxErrorCode.BACKEND_UNAVAILABLE, "BoxReadinessError", message);
  }
}
