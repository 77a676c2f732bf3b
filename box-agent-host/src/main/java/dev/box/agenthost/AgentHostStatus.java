package dev.box.agenthost;

import dev.box.api.BoxRuntimeStatus;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a status page shows, as the reference's {@code get_status}.
 *
 * @param available whether sandboxes can run now
 * @param profile the profile applied to execs
 * @param recentErrorCount how many errors the ring holds
 * @param recentErrors the errors the ring holds, oldest first
 * @param connectorError why sandboxes cannot run, or null
 * @param runtime the server's own status when it answered, or null
 */
public record AgentHostStatus(
    boolean available,
    String profile,
    int recentErrorCount,
    List<ErrorRing.Entry> recentErrors,
    @Nullable String connectorError,
    @Nullable BoxRuntimeStatus runtime) {

  /** Copies {@code recentErrors}. */
  public AgentHostStatus {
    recentErrors = List.copyOf(recentErrors);
  }
}
