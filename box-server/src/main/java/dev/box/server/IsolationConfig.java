package dev.box.server;

import dev.box.core.net.EgressPolicy;

/**
 * How sandboxes are kept apart from the host.
 *
 * @param sandboxUid the host uid and gid of the sandbox user of the namespace backends
 *     (bubblewrap): what sandboxes write to a mount belongs to it; never 0
 * @param egress what network-on sandboxes may reach besides the internet ({@code egress_allow},
 *     {@code egress_deny})
 */
public record IsolationConfig(int sandboxUid, EgressPolicy egress) {
  /** The default host uid of the sandbox user: outside every distribution's user ranges. */
  public static final int DEFAULT_SANDBOX_UID =
      dev.box.backend.bwrap.BwrapBackend.DEFAULT_SANDBOX_UID;

  /** Refuses root. */
  public IsolationConfig {
    if (sandboxUid <= 0) {
      throw new IllegalArgumentException("sandbox_uid must be greater than 0: " + sandboxUid);
    }
  }

  /** The default uid and policy. */
  public static final IsolationConfig DEFAULTS =
      new IsolationConfig(DEFAULT_SANDBOX_UID, EgressPolicy.DEFAULT);
}
