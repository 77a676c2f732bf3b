package dev.box.core.backend;

import dev.box.api.BoxManagedProcessSpec;
import dev.box.api.BoxSpec;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The sessions of a backend that keeps them where every server of one tenant sees them (a cluster's
 * API server), so that any server serves any session: a server that does not hold a session a
 * request names finds it here and adopts its sandbox ({@link SandboxBackend#adopt}).
 *
 * <p>A session is held by the servers that serve it; each renews a lease on the sessions it holds
 * every {@link #renewEvery()}, and any server removes a non-persistent session whose lease has
 * expired (its servers are gone). A server that stops while others serve hands its sessions over
 * instead of stopping them: the next renewal of another server adopts them.
 */
public interface SharedSessions {
  /**
   * A session as recorded.
   *
   * @param spec the session's spec
   * @param sandboxId the backend's name of its sandbox
   * @param createdAt when it was first created
   * @param lastUsedAt when any server last used it, as far as the record knows
   */
  record Entry(BoxSpec spec, String sandboxId, Instant createdAt, Instant lastUsedAt) {}

  /**
   * What a renewal found.
   *
   * @param lastUsed when each held session was last used by any server (the latest of this server's
   *     use and the record's); a held session missing here was deleted by another server
   * @param handedOver the sessions a stopped server handed over, for this one to adopt
   * @param orphans by held session, its held processes that no live server relays (theirs stopped
   *     or died), for this one to reattach
   */
  record Renewal(
      Map<String, Instant> lastUsed,
      List<String> handedOver,
      Map<String, List<HeldProcess>> orphans) {}

  /**
   * A managed process that outlives the server relaying it ({@link Sandbox#spawnHeld}), as recorded
   * beside its session for another server to reattach when that one goes.
   *
   * @param spec its spec, the environment's values blanked: they matter only at the start, and are
   *     not kept anywhere else
   * @param handle what a server reattaches with ({@link Sandbox#reattach})
   * @param startedAt when it started
   */
  record HeldProcess(BoxManagedProcessSpec spec, String handle, Instant startedAt) {

    /** The record of {@code spec}, whose environment's values it blanks. */
    public static HeldProcess of(BoxManagedProcessSpec spec, String handle, Instant startedAt) {
      Map<String, String> keys = new LinkedHashMap<>();
      spec.env().keySet().forEach(key -> keys.put(key, ""));
      BoxManagedProcessSpec blanked =
          new BoxManagedProcessSpec(
              spec.processId(), spec.command(), spec.args(), keys, spec.cwd(), spec.memoryMb());
      return new HeldProcess(blanked, handle, startedAt);
    }
  }

  /**
   * Records that this server relays {@code process} of session {@code sessionId}; it replaces any
   * record of the same process id.
   */
  void recordProcess(String sessionId, HeldProcess process);

  /** Removes the record of process {@code processId} of session {@code sessionId}. */
  void forgetProcess(String sessionId, String processId);

  /** How often {@link #renew} must run for the leases to hold. */
  Duration renewEvery();

  /**
   * Records a started (or adopted) session beside its sandbox, with this server's lease on it.
   *
   * @throws RuntimeException when it cannot be recorded: the session is then not served
   */
  void record(BoxSpec spec, Instant createdAt);

  /** The recorded session {@code sessionId}, or null. */
  @Nullable Entry find(String sessionId);

  /** Every recorded session of the tenant. */
  List<Entry> list();

  /**
   * Renews this server's lease on the sessions it holds, with when it last used each, and removes
   * every non-persistent session whose lease has expired and that no server holds.
   *
   * @param held the sessions this server holds, by id, with when it last used each
   */
  Renewal renew(Map<String, Instant> held);

  /**
   * Whether another server of the tenant is alive, so that this one, stopping, hands its sessions
   * over rather than stopping them.
   */
  boolean othersServe();

  /** Marks {@code sessionIds} as handed over by this server, which is stopping. */
  void handOver(List<String> sessionIds);

  /**
   * Another live server of the tenant.
   *
   * @param name its name where the sessions are kept (its lease)
   * @param url where other servers reach its API, or null when it advertises none
   */
  record Peer(String name, @Nullable URI url) {}

  /**
   * Records where other servers reach this one's API ({@code replica_url}), beside its lease, so
   * that they can send it the requests for what only it holds (its managed processes).
   */
  void advertise(URI url);

  /** The other live servers of the tenant: those whose lease has not run out. */
  List<Peer> peers();
}
