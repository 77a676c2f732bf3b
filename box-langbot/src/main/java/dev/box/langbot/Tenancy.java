package dev.box.langbot;

import dev.box.api.BoxCapacityExceededException;
import dev.box.api.BoxSessionInfo;
import dev.box.api.BoxSessionNotFoundException;
import dev.box.api.BoxValidationException;
import dev.box.core.session.SessionManager;
import dev.box.core.settings.RuntimeLimits;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tenancy layer of LangBot's Box runtime (its namespaces and generation fence), which LangBot
 * uses in its open-source edition too: logical session ids become physical ones per Workspace and
 * placement generation, and a newer generation of a Workspace retires the sessions of the older
 * ones, which are refused from then on.
 */
public final class Tenancy {
  private static final Logger log = LoggerFactory.getLogger(Tenancy.class);
  private static final Pattern UNSAFE = Pattern.compile("[^A-Za-z0-9_.-]+");

  /** The default of {@code box.limits.max_admission_records}, which bounds the fence. */
  public static final int DEFAULT_MAX_RECORDS = RuntimeLimits.MAX_ADMISSION_RECORDS.defaultValue();

  private final SessionManager sessions;
  private volatile int maxRecords;
  private final ConcurrentHashMap<String, Long> generations = new ConcurrentHashMap<>();

  /** A fence over {@code sessions} holding at most {@code maxRecords} Workspaces. */
  public Tenancy(SessionManager sessions, int maxRecords) {
    this.sessions = sessions;
    this.maxRecords = maxRecords;
  }

  /** Changes how many Workspaces the fence holds (the {@code max_admission_records} limit). */
  void maxRecords(int value) {
    maxRecords = value;
  }

  /** {@code "ws-" + sha256(instance + "\0" + workspace)[:24]}: the durable Workspace namespace. */
  public static String namespace(String instanceUuid, String workspaceUuid) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256")
              .digest((instanceUuid + "\0" + workspaceUuid).getBytes(StandardCharsets.UTF_8));
      return "ws-" + HexFormat.of().formatHex(digest).substring(0, 24);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  /** The prefix of every physical session id of this Workspace generation: {@code <ns>-g<n>-}. */
  public static String prefix(ActionContext context) {
    return prefix(context.instanceUuid(), context.workspaceUuid(), context.placementGeneration());
  }

  /** The prefix of every physical session id of a Workspace generation. */
  public static String prefix(String instanceUuid, String workspaceUuid, long generation) {
    return namespace(instanceUuid, workspaceUuid) + "-g" + generation + "-";
  }

  /** The physical id of the logical session {@code logical} of this Workspace generation. */
  public static String physicalId(ActionContext context, String logical) {
    String stripped = logical.strip();
    if (stripped.isEmpty()) {
      throw new BoxValidationException("Box session_id must not be empty");
    }
    String safe = EdgeTrim.trim(UNSAFE.matcher(stripped).replaceAll("-"), "-");
    if (safe.isEmpty()) {
      throw new BoxValidationException("Box session_id must contain a valid character");
    }
    return prefix(context) + safe;
  }

  /**
   * Records that {@code context}'s generation is in use: an older one than the current is refused,
   * a newer one becomes current and retires the sessions of every older one.
   *
   * @throws ActionError {@code PermissionError "Stale Box placement generation"}
   */
  public void observe(ActionContext context) {
    String ns = namespace(context.instanceUuid(), context.workspaceUuid());
    long requested = context.placementGeneration();
    if (!generations.containsKey(ns) && generations.size() >= maxRecords) {
      throw new BoxCapacityExceededException(
          "Box placement fence capacity reached (" + maxRecords + ")");
    }
    long current = generations.merge(ns, requested, Math::max);
    if (requested < current) {
      throw ActionError.permission("Stale Box placement generation");
    }
    retireOlder(ns, requested);
  }

  /** Throws the stale-generation error unless {@code context}'s generation is still current. */
  public void requireCurrent(ActionContext context) {
    if (!isCurrent(
        context.instanceUuid(), context.workspaceUuid(), context.placementGeneration())) {
      throw ActionError.permission("Stale Box placement generation");
    }
  }

  /**
   * Whether {@code generation} is the current one of the Workspace; a Workspace never seen counts
   * its first generation as current.
   */
  public boolean isCurrent(String instanceUuid, String workspaceUuid, long generation) {
    Long current = generations.get(namespace(instanceUuid, workspaceUuid));
    return current == null ? generation >= 1 : current == generation;
  }

  /** The sessions of this Workspace generation, oldest first. */
  public List<BoxSessionInfo> sessionsOf(ActionContext context) {
    String prefix = prefix(context);
    return sessions.list().stream().filter(s -> s.sessionId().startsWith(prefix)).toList();
  }

  private void retireOlder(String ns, long current) {
    String family = ns + "-g";
    String keep = family + current + "-";
    for (BoxSessionInfo session : sessions.list()) {
      String id = session.sessionId();
      if (id.startsWith(family) && !id.startsWith(keep)) {
        try {
          sessions.delete(id);
          log.info("retired session {} of a superseded placement generation", id);
        } catch (BoxSessionNotFoundException e) {
          // Deleted concurrently: nothing left to retire.
        }
      }
    }
  }

  /** For tests: the current generation of every Workspace seen. */
  Map<String, Long> generations() {
    return Map.copyOf(generations);
  }
}
