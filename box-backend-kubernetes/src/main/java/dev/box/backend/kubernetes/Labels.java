package dev.box.backend.kubernetes;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * The labels and annotations by which every replica finds the sessions of its tenant: a session
 * belongs to the pair (sandbox namespace, control token), never to the replica that made it.
 */
final class Labels {
  static final String MANAGED_BY = "app.kubernetes.io/managed-by";
  static final String BOX = "box";
  static final String TENANT = "box.dev/tenant";
  static final String POD = "box.dev/pod";
  static final String SESSION_ID = "box.dev/session-id";

  /** A session record's annotations ({@link PodSessions}): its spec, without command or env. */
  static final String SPEC = "box.dev/spec";

  /** When the session was created. */
  static final String CREATED_AT = "box.dev/created-at";

  /** When any replica last used the session. */
  static final String USED_AT = "box.dev/used-at";

  /** Until when a replica serves the session. */
  static final String LEASE_UNTIL = "box.dev/lease-until";

  /** Set by a replica that stopped while others served: the next renewal adopts the session. */
  static final String HANDED_OVER = "box.dev/handed-over";

  /**
   * A replica's Lease's annotation: where the other replicas reach its API ({@code replica_url}),
   * for the requests only it can serve (its managed processes).
   */
  static final String REPLICA_URL = "box.dev/replica-url";

  /**
   * The label of the pool's pods while they wait ({@link Pool}), and of their own Secrets always: a
   * pool pod's Secret is never a session's record.
   */
  static final String POOL = "box.dev/pool";

  /**
   * The prefix of a session record's annotations that each record one of its held managed processes
   * ({@link PodSessions#recordProcess}), by {@link #processKey}.
   */
  static final String PROCESS = "process.box.dev/";

  private Labels() {}

  /**
   * The annotation that records the held managed process {@code processId}: a hash, as a process id
   * may hold what an annotation's name may not.
   */
  static String processKey(String processId) {
    return PROCESS + "p" + hex(processId).substring(0, 40);
  }

  /**
   * The tenant of a (namespace, control token) pair: a hash, so that no label or log shows the
   * token.
   */
  static String tenant(String namespace, String controlToken) {
    return hex(namespace + "\0" + controlToken).substring(0, 24);
  }

  /**
   * The pod of session {@code sessionId} of {@code tenant}: the same on every replica, so that two
   * replicas creating one session at once make one pod (the second create fails with a conflict). A
   * readable prefix of the id, then a hash of the whole.
   */
  static String podName(String tenant, String sessionId) {
    StringBuilder readable = new StringBuilder();
    for (char c : sessionId.toLowerCase(Locale.ROOT).toCharArray()) {
      if (readable.length() == 24) {
        break;
      }
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
        readable.append(c);
      } else if (readable.length() > 0 && readable.charAt(readable.length() - 1) != '-') {
        readable.append('-');
      }
    }
    String hash = hex(tenant + "\0" + sessionId).substring(0, 16);
    return "box-" + (readable.isEmpty() ? "" : readable + "-") + hash;
  }

  /** The name of the lease of replica {@code instanceId} of {@code tenant}. */
  static String replicaLease(String tenant, String instanceId) {
    return "box-replica-" + hex(tenant + "\0" + instanceId).substring(0, 16);
  }

  private static String hex(String text) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing", e);
    }
  }
}
