package dev.box.backend.kubernetes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.box.api.BoxJson;
import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSpec;
import dev.box.core.backend.SharedSessions;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sessions of one tenant as the cluster records them, so that every replica serves every
 * session ({@link SharedSessions}). A session's record is its Secret (named by the session, {@link
 * Labels#podName}), whose annotations hold:
 *
 * <ul>
 *   <li>{@value Labels#SPEC}: the session's spec, without a command or an environment;
 *   <li>{@value Labels#CREATED_AT} and {@value Labels#USED_AT}: when it was created and last used
 *       by any replica;
 *   <li>{@value Labels#LEASE_UNTIL}: until when a replica serves it, renewed by every replica that
 *       does; a non-persistent session whose lease has run out is removed by any replica (one that
 *       never got a lease, a create cut short, runs out a lease after the Secret was made);
 *   <li>{@value Labels#HANDED_OVER}: set by a replica that stopped while others were alive; the
 *       next renewal of another replica adopts the session;
 *   <li>one {@value Labels#PROCESS} annotation per held managed process (its spec without the
 *       environment's values, its handle, its start, and the replica that relays it, by the name of
 *       that replica's Lease): when that replica is no longer alive, the next renewal of a replica
 *       that holds the session reattaches to the process. One annotation each, so that replicas
 *       recording processes of one session at once never overwrite each other's.
 * </ul>
 *
 * Persistent sessions are never removed for their lease: they wait, with their pod and claim, for a
 * replica to serve them.
 */
final class PodSessions implements SharedSessions {
  private static final Logger log = LoggerFactory.getLogger(PodSessions.class);

  private final Pods pods;
  private final Replicas replicas;
  private final Duration startTimeout;
  private final ObjectMapper json = BoxJson.newMapper();

  /**
   * @param startTimeout how long a pod may take to start: a record that has no lease yet (its
   *     session is being created) is kept that long, and one lease more
   */
  PodSessions(Pods pods, Replicas replicas, Duration startTimeout) {
    this.pods = pods;
    this.replicas = replicas;
    this.startTimeout = startTimeout;
  }

  private Replica replica() {
    return replicas.replica();
  }

  private Instant now() {
    return replica().clock().instant();
  }

  @Override
  public Duration renewEvery() {
    return replica().lease().dividedBy(3);
  }

  @Override
  public void record(BoxSpec spec, Instant createdAt) {
    String text;
    try {
      text = json.writeValueAsString(spec.toBuilder().cmd("").env(Map.of()).build());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write the spec of session " + spec.sessionId(), e);
    }
    Instant now = now();
    Map<String, @Nullable String> notes = new HashMap<>();
    notes.put(Labels.SPEC, text);
    notes.put(Labels.CREATED_AT, createdAt.toString());
    notes.put(Labels.USED_AT, now.toString());
    notes.put(Labels.LEASE_UNTIL, now.plus(replica().lease()).toString());
    notes.put(Labels.HANDED_OVER, null);
    annotate(pods.podName(spec.sessionId()), notes);
  }

  @Override
  public @Nullable Entry find(String sessionId) {
    Secret secret =
        pods.client()
            .secrets()
            .inNamespace(pods.settings().namespace())
            .withName(pods.podName(sessionId))
            .get();
    return secret == null ? null : entry(secret);
  }

  @Override
  public List<Entry> list() {
    List<Entry> entries = new ArrayList<>();
    for (Secret secret : records()) {
      Entry entry = entry(secret);
      if (entry != null) {
        entries.add(entry);
      }
    }
    return entries;
  }

  @Override
  public Renewal renew(Map<String, Instant> held) {
    replicas.renew();
    Instant now = now();
    Map<String, Instant> lastUsed = new HashMap<>();
    List<String> handedOver = new ArrayList<>();
    Map<String, List<HeldProcess>> orphans = new HashMap<>();
    Set<String> alive = null;
    for (Secret secret : records()) {
      Entry entry = entry(secret);
      String id = entry == null ? null : entry.spec().sessionId();
      Instant mine = id == null ? null : held.get(id);
      if (entry != null && mine != null) {
        Instant latest = mine.isAfter(entry.lastUsedAt()) ? mine : entry.lastUsedAt();
        lastUsed.put(id, latest);
        renewLease(secret, latest, now);
        List<ProcessNote> notes = processNotes(secret);
        if (!notes.isEmpty()) {
          alive = alive != null ? alive : aliveReplicas();
          List<HeldProcess> left = orphaned(notes, alive);
          if (!left.isEmpty()) {
            orphans.put(id, left);
          }
        }
      } else if (entry != null && annotations(secret).get(Labels.HANDED_OVER) != null) {
        handedOver.add(id);
      } else if (leaseUntil(secret).isBefore(now)
          && (entry == null || !entry.spec().persistent())) {
        String pod = podOf(secret);
        log.info("removing {}: no replica has renewed its lease", pod);
        pods.remove(pod);
      }
    }
    return new Renewal(lastUsed, handedOver, orphans);
  }

  /** The Leases' names of the live replicas, this one's included. */
  private Set<String> aliveReplicas() {
    Set<String> alive = new HashSet<>();
    alive.add(replicas.leaseName());
    replicas.peers().forEach(peer -> alive.add(peer.name()));
    return alive;
  }

  /** The processes of {@code notes} that no replica of {@code alive} relays. */
  private static List<HeldProcess> orphaned(List<ProcessNote> notes, Set<String> alive) {
    List<HeldProcess> left = new ArrayList<>();
    for (ProcessNote note : notes) {
      if (!alive.contains(note.owner())) {
        left.add(note.process());
      }
    }
    return left;
  }

  @Override
  public void recordProcess(String sessionId, HeldProcess process) {
    BoxManagedProcessSpec spec = process.spec();
    ProcessNote note =
        new ProcessNote(
            spec.processId(),
            spec.command(),
            spec.args(),
            List.copyOf(spec.env().keySet()),
            spec.cwd(),
            spec.memoryMb(),
            process.handle(),
            process.startedAt(),
            replicas.leaseName());
    String text;
    try {
      text = json.writeValueAsString(note);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write the record of " + spec.processId(), e);
    }
    Map<String, @Nullable String> notes = new HashMap<>();
    notes.put(Labels.processKey(spec.processId()), text);
    annotate(pods.podName(sessionId), notes);
  }

  @Override
  public void forgetProcess(String sessionId, String processId) {
    Map<String, @Nullable String> notes = new HashMap<>();
    notes.put(Labels.processKey(processId), null);
    annotate(pods.podName(sessionId), notes);
  }

  /**
   * A held managed process as its session's record keeps it.
   *
   * @param owner the Lease's name of the replica that relays it
   */
  private record ProcessNote(
      String processId,
      String command,
      List<String> args,
      List<String> envKeys,
      String cwd,
      int memoryMb,
      String handle,
      Instant startedAt,
      String owner) {

    HeldProcess process() {
      Map<String, String> env = new LinkedHashMap<>();
      envKeys.forEach(key -> env.put(key, ""));
      return new HeldProcess(
          new BoxManagedProcessSpec(processId, command, args, env, cwd, memoryMb),
          handle,
          startedAt);
    }
  }

  /** The held processes {@code secret} records; one that cannot be read is skipped. */
  private List<ProcessNote> processNotes(Secret secret) {
    List<ProcessNote> notes = new ArrayList<>();
    for (Map.Entry<String, String> note : annotations(secret).entrySet()) {
      if (!note.getKey().startsWith(Labels.PROCESS)) {
        continue;
      }
      try {
        notes.add(json.readValue(note.getValue(), ProcessNote.class));
      } catch (JsonProcessingException | RuntimeException e) {
        log.warn(
            "the record {} of {} cannot be read: {}", note.getKey(), podOf(secret), e.toString());
      }
    }
    return notes;
  }

  private void renewLease(Secret secret, Instant used, Instant now) {
    Map<String, @Nullable String> notes = new HashMap<>();
    notes.put(Labels.USED_AT, used.toString());
    notes.put(Labels.LEASE_UNTIL, now.plus(replica().lease()).toString());
    try {
      annotate(secret.getMetadata().getName(), notes);
    } catch (KubernetesClientException e) {
      log.warn("cannot renew the lease of {}: {}", secret.getMetadata().getName(), e.getMessage());
    }
  }

  @Override
  public boolean othersServe() {
    return replicas.othersAlive();
  }

  @Override
  public void handOver(List<String> sessionIds) {
    Map<String, @Nullable String> notes = new HashMap<>();
    notes.put(Labels.HANDED_OVER, now().toString());
    for (String id : sessionIds) {
      try {
        annotate(pods.podName(id), notes);
      } catch (KubernetesClientException e) {
        log.warn("cannot hand session {} over: {}", id, e.getMessage());
      }
    }
  }

  @Override
  public void advertise(URI url) {
    replicas.advertise(url);
  }

  @Override
  public List<Peer> peers() {
    return replicas.peers();
  }

  /** The tenant's session records. */
  private List<Secret> records() {
    return pods.client()
        .secrets()
        .inNamespace(pods.settings().namespace())
        .withLabel(Labels.TENANT, pods.tenant())
        .withoutLabel(Labels.POOL)
        .list()
        .getItems();
  }

  /** The session {@code secret} records, or null when it holds no spec yet (a create under way). */
  private @Nullable Entry entry(Secret secret) {
    Map<String, String> notes = annotations(secret);
    String spec = notes.get(Labels.SPEC);
    String pod = podOf(secret);
    if (spec == null) {
      return null;
    }
    try {
      Instant created =
          Instant.parse(notes.getOrDefault(Labels.CREATED_AT, Instant.EPOCH.toString()));
      return new Entry(
          json.readValue(spec, BoxSpec.class),
          pod,
          created,
          Instant.parse(notes.getOrDefault(Labels.USED_AT, created.toString())));
    } catch (JsonProcessingException | RuntimeException e) {
      log.warn("the record {} cannot be read: {}", secret.getMetadata().getName(), e.getMessage());
      return null;
    }
  }

  /** The pod the record {@code secret} names: a pool pod keeps its own name. */
  private static String podOf(Secret secret) {
    Map<String, String> labels = secret.getMetadata().getLabels();
    String pod = labels == null ? null : labels.get(Labels.POD);
    return pod != null ? pod : secret.getMetadata().getName();
  }

  /**
   * Until when {@code secret}'s session is leased: its annotation, else (its session is being
   * created, or a create was cut short) the Secret's creation, the time a pod may take to start and
   * one lease.
   */
  private Instant leaseUntil(Secret secret) {
    String until = annotations(secret).get(Labels.LEASE_UNTIL);
    String created = secret.getMetadata().getCreationTimestamp();
    Duration grace = startTimeout.plus(replica().lease());
    try {
      if (until != null) {
        return Instant.parse(until);
      }
      return (created == null ? now() : Instant.parse(created)).plus(grace);
    } catch (RuntimeException e) {
      return Instant.EPOCH;
    }
  }

  private static Map<String, String> annotations(Secret secret) {
    if (secret.getMetadata().getAnnotations() == null) {
      secret.getMetadata().setAnnotations(new HashMap<>());
    }
    return secret.getMetadata().getAnnotations();
  }

  /**
   * Sets (or, for a null value, removes) annotations of the record {@code name} with one merge
   * patch: no read before, so that replicas renewing the same record never conflict.
   */
  private void annotate(String name, Map<String, @Nullable String> notes) {
    ObjectNode patch = json.createObjectNode();
    ObjectNode annotations = patch.putObject("metadata").putObject("annotations");
    notes.forEach(annotations::put);
    pods.client()
        .secrets()
        .inNamespace(pods.settings().namespace())
        .withName(name)
        .patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
  }
}
