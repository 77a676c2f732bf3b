package dev.box.server;

import dev.box.core.net.EgressPolicy;
import dev.box.core.settings.BooleanSetting;
import dev.box.core.settings.IntSetting;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How sandboxes are kept apart from the host.
 *
 * @param sandboxUid the host uid and gid of the sandbox user of the namespace backends
 *     (bubblewrap): what sandboxes write to a mount belongs to it; never 0
 * @param egress what network-on sandboxes may reach besides the internet ({@code egress_allow},
 *     {@code egress_deny})
 * @param nsjailPath the nsjail binary of the nsjail backend ({@code nsjail_path}), or null to look
 *     for it in the system directories
 * @param execAgent whether sandboxes (bubblewrap, nsjail, Docker, Podman) start their processes
 *     through the exec agent in each sandbox ({@code exec_agent}, on unless {@code false}) rather
 *     than through nsenter or the engine's exec API
 * @param poolSize how many sandboxes of the pooled shape wait on the bubblewrap, nsjail, Docker or
 *     Podman backend, started ahead of their sessions ({@code pool_size}, 2 by default); 0 disables
 *     the pool
 * @param favorDynmods whether the server holds a cgroup hierarchy mounted with the kernel's {@code
 *     favordynmods} option while it runs, so that moving a process into a cgroup (every exec, every
 *     sandbox start) does not wait for an RCU grace period ({@code cgroup_favordynmods}, on unless
 *     {@code false}; see {@link dev.box.core.backend.CgroupMigrations})
 */
public record IsolationConfig(
    int sandboxUid,
    EgressPolicy egress,
    @Nullable Path nsjailPath,
    boolean execAgent,
    int poolSize,
    boolean favorDynmods) {
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
      new IsolationConfig(DEFAULT_SANDBOX_UID, EgressPolicy.DEFAULT, null, true, 2, true);

  private static final BooleanSetting EXEC_AGENT = BooleanSetting.onUnless("false");

  private static final BooleanSetting FAVOR_DYNMODS = BooleanSetting.onUnless("false");

  private static final IntSetting POOL_SIZE = new IntSetting("pool_size", 2, 0, 64);

  private static final IntSetting SANDBOX_UID =
      new IntSetting("sandbox_uid", DEFAULT_SANDBOX_UID, 1, Integer.MAX_VALUE);

  private static final String EGRESS_ALLOW = "egress_allow";
  private static final String EGRESS_DENY = "egress_deny";
  private static final String NSJAIL_PATH = "nsjail_path";
  private static final String EXEC_AGENT_KEY = "exec_agent";
  private static final String FAVOR_DYNMODS_KEY = "cgroup_favordynmods";

  /** The keys {@link #read} reads. */
  static final List<String> KEYS =
      List.of(
          SANDBOX_UID.key(),
          EGRESS_ALLOW,
          EGRESS_DENY,
          NSJAIL_PATH,
          EXEC_AGENT_KEY,
          POOL_SIZE.key(),
          FAVOR_DYNMODS_KEY);

  /**
   * Reads the settings from the resolved values of {@code box serve} ({@code sandbox_uid}, {@code
   * egress_allow}, {@code egress_deny}, {@code nsjail_path}, {@code exec_agent}, {@code pool_size},
   * {@code cgroup_favordynmods}).
   *
   * @throws IllegalArgumentException with a message for the user when a value is invalid
   */
  static IsolationConfig read(Map<String, String> values) {
    return new IsolationConfig(
        SANDBOX_UID.read(values),
        EgressPolicy.parse(
            values.getOrDefault(EGRESS_ALLOW, ""), values.getOrDefault(EGRESS_DENY, "")),
        nsjailPath(values.get(NSJAIL_PATH)),
        EXEC_AGENT.parse(values.get(EXEC_AGENT_KEY)),
        POOL_SIZE.read(values),
        FAVOR_DYNMODS.parse(values.get(FAVOR_DYNMODS_KEY)));
  }

  private static @Nullable Path nsjailPath(@Nullable String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    Path path = Path.of(value.strip());
    if (!path.isAbsolute()) {
      throw new IllegalArgumentException("nsjail_path must be an absolute path: " + value);
    }
    return path.normalize();
  }
}
